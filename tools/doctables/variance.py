"""docs/variance.md: bagging's members (results/bag_choice) and the levers against variance on
the real-data suite (results/suite_variance)."""

from __future__ import annotations

import pandas as pd

from kacs_cli.experiments.campaign import results
from kacs_cli.reporting import kstats, stats
from tools.doctables.common import ALPHA, Runs, decimal, table

BAG_CHOICE = "bag_choice/bag_choice.csv"
# The variants of results/bag_choice against the single model, in the table's order.
BAG_VARIANTS = (("boot", "5 bags, bootstrap, each refined"), ("boot_merged_refined", "the same, merged model refined again"),
                ("half", "5 bags, half-samples, each refined"))


def _bag_choice(runs: Runs) -> pd.DataFrame:
    return pd.read_csv(runs.root / "results" / BAG_CHOICE)


def t_bag_choice(runs: Runs) -> str:
    frame = _bag_choice(runs)
    rows = []
    for name, part in frame.groupby("dataset", sort=False):
        row = [name, str(len(part)), decimal(part["single"].mean())]
        for column, _ in BAG_VARIANTS:
            wins = int((part[column] < part["single"]).sum())
            row.append(f"{decimal(part[column].mean())} ({wins} of {len(part)})")
        row.append(f"{part['boot_seconds'].mean() / part['single_seconds'].mean():.1f}x")
        rows.append(row)
    return table(["dataset", "runs", "single model", *(label for _, label in BAG_VARIANTS), "time of 5 bags"],
                 rows, ["l", "r", "r", "r", "r", "r", "r"])


SMOOTHNESS_PROBE = "smoothness_probe/smoothness_probe.csv"


def t_smoothness_probe(runs: Runs) -> str:
    frame = pd.read_csv(runs.root / "results" / SMOOTHNESS_PROBE)
    mus = sorted(frame.mu.unique())
    rows = []
    for name, part in frame.groupby("dataset", sort=False):
        wide = part.pivot(index="run", columns="mu", values="test_mae")
        row = [name, str(len(wide)), decimal(wide[0.0].mean())]
        for mu in mus[1:]:
            row.append(f"{decimal(wide[mu].mean())} ({int((wide[mu] < wide[0.0]).sum())})")
        rows.append(row)
    return table(["dataset", "runs", "mu = 0", *(f"mu = {mu:g}" for mu in mus[1:])], rows,
                 ["l", "r", *("r" for _ in mus)])


# results/suite_variance: each lever against the setting it changes by one step.
SUITE_VARIANCE = "suite_variance"
LEVERS = {"kacs-recommended-bags": "kacs-recommended", "kacs-recommended-smooth": "kacs-recommended",
          "kacs-recommended-bags-smooth": "kacs-recommended", "xcsf-recommended-bags": "xcsf-recommended"}


def _shared(runs: Runs) -> pd.DataFrame:
    """The runs of results/suite_variance that every method has on its dataset, so that a
    table does not depend on where the campaign was cut."""
    r = runs(SUITE_VARIANCE)
    configured = results.ResolvedConfig.read(runs.root / "results" / SUITE_VARIANCE).methods
    counts = r[r.method.isin(configured)].groupby(["benchmark", "run"]).method.nunique()
    complete = counts[counts == len(configured)].index
    return r.set_index(["benchmark", "run"]).loc[complete].reset_index()


def lever_verdicts(r: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Per lever, per dataset: + (lower test MAE than its reference), - (higher) or ~ (level):
    paired two-sided Wilcoxon over the runs every method has, Holm over the datasets. Computed
    here: the campaign still writes this folder, and its report pairs each method's own runs."""
    datasets = list(dict.fromkeys(r.benchmark))
    out = {}
    for lever, reference in LEVERS.items():
        pairs = [[r[(r.benchmark == d) & (r.method == m)].set_index("run").test_mae.sort_index() for m in (lever, reference)]
                 for d in datasets]
        adjusted = kstats.holm([stats.wilcoxon_p(x.to_numpy(), y.loc[x.index].to_numpy()) for x, y in pairs])
        out[lever] = {d: "~" if not p < ALPHA else "+" if x.mean() < y.loc[x.index].mean() else "-"
                      for d, p, (x, y) in zip(datasets, adjusted, pairs)}
    return out


def t_suite_variance(runs: Runs) -> str:
    if not runs.has(SUITE_VARIANCE):
        return "(no committed runs yet)\n"
    r = _shared(runs)
    if r.empty:
        return "(no dataset has all its methods' runs yet)\n"
    verdicts = lever_verdicts(r)
    methods = list(dict.fromkeys(r.method))
    rows = []
    for d in dict.fromkeys(r.benchmark):
        row = [d, str(r[r.benchmark == d].run.nunique())]
        for m in methods:
            cell = decimal(r[(r.benchmark == d) & (r.method == m)].test_mae.mean())
            row.append(f"{cell} {verdicts[m][d]}" if m in verdicts else cell)
        rows.append(row)
    return table(["dataset", "runs", *methods], rows, ["l", "r", *("r" for _ in methods)])


def v_bag_choice_below_boot(runs: Runs, column: str) -> str:
    """In how many runs of results/bag_choice the variant `column` had a lower test MAE than
    the bootstrap bags without it."""
    frame = _bag_choice(runs)
    return f"{int((frame[column] < frame['boot']).sum())} of {len(frame)}"
