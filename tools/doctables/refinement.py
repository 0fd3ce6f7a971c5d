"""Refinement's campaigns (docs/refinement.md): the input-law cells of the robustness
experiment and refined KACS at three iteration budgets, from their reports."""

from __future__ import annotations

from tools.doctables.common import MAIN_BENCHMARKS, Runs, bold_min, mean_sd, means, name, table, verdicts

ROBUSTNESS_CELLS = tuple(f"f{k}-{law}" for law in ("skewed", "discrete") for k in range(1, 5))
LABELS = {"xcsf": "XCSF", "kacs": "KACS", "kacs-refined": "KACS refined", "xcsf-quantile": "XCSF, quantile inputs",
          "kacs-quantile-refined": "KACS refined, quantile inputs"}
BUDGETS = ("100k", "200k", "400k")


def t_robustness(runs: Runs) -> str:
    """Mean ± SD of the test MAE per input-law cell and method; best mean in bold."""
    mae, sd = means(runs, "robustness"), means(runs, "robustness", "test_mae_sd")
    rows = [[c] + bold_min([mean_sd(mae.loc[c, m], sd.loc[c, m], 3) for m in mae.columns], list(mae.loc[c]))
            for c in ROBUSTNESS_CELLS]
    return table(["cell"] + [LABELS[m] for m in mae.columns], rows, ["l"] + ["r"] * len(mae.columns))


def t_robustness_verdicts(runs: Runs) -> str:
    """Each method against XCSF per cell: the report's paired two-sided Wilcoxon over the runs,
    Holm over the methods compared on the cell; better / level / worse than XCSF."""
    v = verdicts(runs, "robustness", "xcsf", ROBUSTNESS_CELLS, list(means(runs, "robustness").columns))
    rows = [[LABELS[m], str(len(v[m]["worse"])), str(len(v[m]["level"])),
             str(len(v[m]["better"])) + (f" ({', '.join(v[m]['better'])})" if 0 < len(v[m]["better"]) <= 3 else "")]
            for m in v]
    return table(["method", "better than XCSF on", "level on", "worse than XCSF on"], rows, ["l", "r", "r", "l"])


def t_budget(runs: Runs) -> str:
    """Refined KACS at three iteration budgets: evolved and refined mean test MAE."""
    present = {b: runs.report(f"budget/{b}", "refinement").set_index("cell") for b in BUDGETS if runs.has(f"budget/{b}")}
    rows = [[name(bench)] + [f"{present[b].loc[bench, k]:.4f}" if b in present else "—"
                             for b in BUDGETS for k in ("evolved_mean", "refined_mean")] for bench in MAIN_BENCHMARKS]
    head = ["benchmark"] + [f"{b} {kind}" for b in BUDGETS for kind in ("evolved", "refined")]
    return table(head, rows, ["l"] + ["r"] * (2 * len(BUDGETS)))
