"""Missing values on the real-data suite (results/suite_missing, docs/experiments.md section 11):
each native method's rise over its complete data and native KACS against mean imputation, as
the report's missing-inputs table has them."""

from __future__ import annotations

from kacs_cli.reporting.quoted.common import Quoted, Source, table

# A verdict of the report as one sign after a change: lower error (+), higher (-), level (~).
_SIGN = {"better": "+", "worse": "-", "no difference": "~"}


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


EXPERIMENTS = {"suite_missing": (rises,)}
