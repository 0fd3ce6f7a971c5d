"""The levers against variance on the real-data suite (results/suite_variance) and on the
article's eight benchmarks (results/variance), docs/variance.md: each lever against the setting
it changes by one step, over the runs every method has."""

from __future__ import annotations

import pandas as pd

from kacs_cli.reporting import kstats, stats
from kacs_cli.reporting.quoted.common import ALPHA, Quoted, Source, table

LEVERS = {"kacs-recommended-bags": "kacs-recommended", "kacs-recommended-smooth": "kacs-recommended",
          "kacs-recommended-bags-smooth": "kacs-recommended", "xcsf-recommended-bags": "xcsf-recommended"}


def _shared(src: Source) -> pd.DataFrame:
    """The runs that every configured method has on its dataset, so that the table does not
    depend on where the campaign stopped."""
    r = src.runs()
    configured = src.config.methods
    counts = r[r.method.isin(configured)].groupby(["benchmark", "run"]).method.nunique()
    complete = counts[counts == len(configured)].index
    return r.set_index(["benchmark", "run"]).loc[complete].reset_index()


def lever_verdicts(r: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Per lever, per dataset: + (lower test MAE than its reference), - (higher) or ~ (level):
    paired two-sided Wilcoxon over the runs every method has, Holm over the datasets (the
    report's pairwise table pairs each two methods' own runs instead)."""
    datasets = list(dict.fromkeys(r.benchmark))
    out = {}
    for lever, reference in LEVERS.items():
        pairs = [[r[(r.benchmark == d) & (r.method == m)].set_index("run").test_mae.sort_index() for m in (lever, reference)]
                 for d in datasets]
        adjusted = kstats.holm([stats.wilcoxon_p(x.to_numpy(), y.loc[x.index].to_numpy()) for x, y in pairs])
        out[lever] = {d: "~" if not p < ALPHA else "+" if x.mean() < y.loc[x.index].mean() else "-"
                      for d, p, (x, y) in zip(datasets, adjusted, pairs)}
    return out


def levers(src: Source) -> Quoted:
    """Per dataset every method's mean test MAE over the shared runs, each lever's with its
    verdict against its reference."""
    r = _shared(src)
    if r.empty:  # a table without rows: its one header says why
        return table("levers", ["(no dataset has all its methods' runs yet)"], [])
    verdicts = lever_verdicts(r)
    methods = list(dict.fromkeys(r.method))
    rows = []
    for d in dict.fromkeys(r.benchmark):
        row = [d, str(r[r.benchmark == d].run.nunique())]
        for m in methods:
            cell = f"{r[(r.benchmark == d) & (r.method == m)].test_mae.mean():.4f}"
            row.append(f"{cell} {verdicts[m][d]}" if m in verdicts else cell)
        rows.append(row)
    return table("levers", ["dataset", "runs", *methods], rows)


EXPERIMENTS = {"suite_variance": (levers,), "variance": (levers,)}
