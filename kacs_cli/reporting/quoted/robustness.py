"""The input-law cells of the robustness experiment (docs/refinement.md and its line of
docs/results-summary.md): every method's test MAE per cell and the verdicts against XCSF."""

from __future__ import annotations

from kacs_cli.reporting.quoted.common import (Quoted, Source, bold_min, compare, mean_sd, means, table, values,
                                              verdicts, word)

CELLS = tuple(f"f{k}-{law}" for law in ("skewed", "discrete") for k in range(1, 5))
LABELS = {"xcsf": "XCSF", "kacs": "KACS", "kacs-refined": "KACS refined", "xcsf-quantile": "XCSF, quantile inputs",
          "kacs-quantile-refined": "KACS refined, quantile inputs"}


def _few(cells: list[str]) -> str:
    """How many cells, and which when three or fewer."""
    return str(len(cells)) + (f" ({', '.join(cells)})" if 0 < len(cells) <= 3 else "")


def robustness(src: Source) -> Quoted:
    """Mean ± SD of the test MAE per input-law cell and method, the best mean in bold; each
    method against XCSF per cell (paired two-sided Wilcoxon over the runs, Holm over the methods
    compared on the cell); the headline."""
    mae, sd = means(src), means(src, "test_mae_sd")
    out = table("methods", ["cell"] + [LABELS[m] for m in mae.columns],
                [[c] + bold_min([mean_sd(mae.loc[c, m], sd.loc[c, m], 3) for m in mae.columns], list(mae.loc[c]))
                 for c in CELLS])
    v = verdicts(src, "xcsf", CELLS, list(mae.columns))
    out.update(table("verdicts", ["method", "better than XCSF on", "level on", "worse than XCSF on"],
                     [[LABELS[m], str(len(v[m]["worse"])), str(len(v[m]["level"])), _few(v[m]["better"])] for m in v]))
    pairs = compare(src, "kacs-quantile-refined", "kacs-refined")
    quantile = sum(word(pairs[x].p, pairs[x].a_mean, pairs[x].b_mean) == "better" for x in CELLS)
    out.update(values(headline=f"f1-f4 with skewed or discrete inputs: refined KACS better than XCSF on "
                               f"{len(v['kacs-refined']['worse'])} of 8 cells (KACS on {len(v['kacs']['worse'])}), "
                               f"worse on {len(v['kacs-refined']['better'])}; the quantile transform better than "
                               f"min-max on {quantile} of 8 (refined KACS)"))
    return out


EXPERIMENTS = {"robustness": (robustness,)}
