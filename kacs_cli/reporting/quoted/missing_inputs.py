"""Missing values on the real-data suite (docs/experiments.md section 11): each native method's
rise over its complete data and native KACS against mean imputation, as the report's
missing-inputs table has them (results/suite_missing); a value learned at a missing input
against the rules' centres (results/suite_missing_value)."""

from __future__ import annotations

from kacs_cli.reporting.quoted.common import Quoted, Source, compare, table, values

# A verdict of the report as one sign after a change: lower error (+), higher (-), level (~;
# "no difference" in the missing-inputs table, "level" in the pairwise one).
_SIGN = {"better": "+", "worse": "-", "no difference": "~", "level": "~"}


def _change(row) -> str:
    sign = _SIGN.get(row.verdict, "")
    return f"{row.change_pct:+.1f} %" + (f" {sign}" if sign else "")


def rises(src: Source) -> Quoted:
    """Per dataset and share removed: native KACS's and gradient boosting's mean test MAE, each
    one's change over its complete data and native KACS's against mean imputation, with the
    report's verdicts (Holm over the datasets); the suite's row is the change of the mean over
    the datasets."""
    tests = src.report("missing-inputs")
    natives = list(dict.fromkeys(tests.method))
    learner, baselines = natives[0], natives[1:]
    rows = []
    for dataset in dict.fromkeys(tests.dataset):
        for level in sorted(tests.level.unique()):
            here = tests[(tests.dataset == dataset) & (tests.level == level)]
            mine = here[here.method == learner].set_index("against")
            if "complete data" not in mine.index:
                continue
            rise = mine.loc["complete data"]
            row = [dataset, f"{100 * level:g} %", f"{rise.other_mean:.4f}", f"{rise['mean']:.4f}", _change(rise)]
            twin = mine.drop(index="complete data")
            row.append(_change(twin.iloc[0]) if len(twin) else "")
            for baseline in baselines:
                theirs = here[(here.method == baseline) & (here.against == "complete data")]
                row += ([f"{theirs.iloc[0]['mean']:.4f}", _change(theirs.iloc[0])] if len(theirs) else ["", ""])
            rows.append(row)
    headers = ["dataset", "removed", f"{learner} complete", f"{learner} native", "change",
               "against imputed"]
    for baseline in baselines:
        headers += [f"{baseline} native", "change"]
    return table("rises", headers, rows)


CENTRE, LEARNED = "kacs-recommended", "kacs-recommended-learned"


def learned(src: Source) -> Quoted:
    """Per dataset the recommended KACS's mean test MAE with a missing input read at its rules'
    centres and with a value learned per inner function, the change and its verdict (the
    report's pairwise table: paired Wilcoxon, Holm over the datasets); the suite's row is the
    change of the mean over the datasets that have both; and how many are better, worse and
    level."""
    pairs = compare(src, LEARNED, CENTRE)
    rows = [[cell, str(int(row.n_pairs)), f"{row.b_mean:.4f}", f"{row.a_mean:.4f}", _change(row)]
            for cell, row in pairs.items()]
    centre = sum(row.b_mean for row in pairs.values()) / len(pairs)
    learnt = sum(row.a_mean for row in pairs.values()) / len(pairs)
    rows.append(["suite", "", f"{centre:.4f}", f"{learnt:.4f}", f"{100 * (learnt / centre - 1):+.1f} %"])
    out = table("learned", ["dataset", "runs", "centre", "learned", "change"], rows)
    out.update(values(**{f"learned-{w}": f"{sum(row.verdict == w for row in pairs.values())} of {len(pairs)}"
                         for w in ("better", "worse", "level")}))
    return out


EXPERIMENTS = {"suite_missing": (rises,), "suite_missing_value": (learned,)}
