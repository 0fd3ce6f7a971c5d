"""Refinement's campaigns (docs/refinement.md): the input-law cells of the robustness
experiment and refined KACS at three iteration budgets."""

from __future__ import annotations

from tools.doctables.common import (MAIN_BENCHMARKS, Runs, mean, mean_sd, methods, name, sd, table, verdicts)

ROBUSTNESS_CELLS = tuple(f"f{k}-{law}" for law in ("skewed", "discrete") for k in range(1, 5))
LABELS = {"xcsf": "XCSF", "kacs": "KACS", "kacs-refined": "KACS refined", "xcsf-quantile": "XCSF, quantile inputs",
          "kacs-quantile-refined": "KACS refined, quantile inputs"}
BUDGETS = ("100k", "200k", "400k")


def robustness(runs: Runs) -> str:
    """Mean ± SD of the test MAE per input-law cell and method; best mean in bold."""
    r = runs("robustness")
    ms = methods(r)
    rows = []
    for cell in ROBUSTNESS_CELLS:
        means = {m: mean(r, cell, m, "test_mae") for m in ms}
        best = min(round(v, 3) for v in means.values())
        row = [cell]
        for m in ms:
            txt = mean_sd(means[m], sd(r, cell, m, "test_mae"), 3)
            row.append(f"**{txt}**" if round(means[m], 3) == best else txt)
        rows.append(row)
    return table(["cell"] + [LABELS[m] for m in ms], rows, ["l"] + ["r"] * len(ms))


def robustness_verdicts(runs: Runs) -> str:
    """Each method against XCSF per cell: paired two-sided Wilcoxon over the runs, Holm over
    the methods compared on the cell; better / level / worse than XCSF."""
    v = verdicts(runs("robustness"), control="xcsf", benchmarks=ROBUSTNESS_CELLS)
    rows = [[LABELS[m], str(len(v[m]["worse"])), str(len(v[m]["level"])),
             str(len(v[m]["better"])) + (f" ({', '.join(v[m]['better'])})" if 0 < len(v[m]["better"]) <= 3 else "")]
            for m in v]
    return table(["method", "better than XCSF on", "level on", "worse than XCSF on"], rows, ["l", "r", "r", "l"])


def budget(runs: Runs) -> str:
    """Refined KACS at three iteration budgets: evolved and refined mean test MAE."""
    present = [b for b in BUDGETS if runs.has(f"budget/{b}")]
    rows = []
    for bench in MAIN_BENCHMARKS:
        row = [name(bench)]
        for b in BUDGETS:
            if b not in present:
                row += ["—", "—"]
                continue
            here = runs(f"budget/{b}")
            here = here[here.benchmark == bench]
            row += [f"{here.evolved_test_mae.mean():.4f}", f"{here.test_mae.mean():.4f}"]
        rows.append(row)
    head = ["benchmark"] + [f"{b} {kind}" for b in BUDGETS for kind in ("evolved", "refined")]
    return table(head, rows, ["l"] + ["r"] * (2 * len(BUDGETS)))


TABLES = {
    "robustness": robustness,
    "robustness-verdicts": robustness_verdicts,
    "budget": budget,
}
VALUES: dict = {}
