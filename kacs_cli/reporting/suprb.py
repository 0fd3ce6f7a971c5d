"""The SupRB comparison table (docs/algorithm.md section 10): our XCSF and KACS beside the literature.

Per dataset, mean ± SD over the runs (64 under the alternative protocol) of the test MSE on
the standardized target and of the macro-rule count, for our XCSF and KACS, beside the
values Heider et al. (2025) report for XCSF after compaction and for SupRB-ES
(kacs_cli/experiments/data/suprb_literature.csv, verbatim from docs/algorithm.md section 10). Those are reference
points from another study, so the table is descriptive only: no test, no ranks, no bold.
"""

from __future__ import annotations

import math

import pandas as pd

from kacs_cli.engine.registry import DEFAULT_PAIR
from kacs_cli.experiments.data import PACKAGE_DATA
from kacs_cli.reporting.files import slug
from kacs_cli.reporting.model import ExperimentReport
from kacs_cli.reporting.pair import pair_ran
from kacs_cli.reporting.tables import Table, fmt_sd, fmt_value, tcell

LITERATURE_PATH = PACKAGE_DATA / "suprb_literature.csv"
# Datasets only the SupRB comparison uses: an alternative-protocol experiment holding one
# of them gets the table.
SUPRB_ONLY = ("pppts", "pt")
DISPLAY = {"asn": "ASN", "ccpp": "CCPP", "cs": "CS", "eec": "EEC", "pppts": "PPPTS", "pt": "PT"}


def load_literature() -> pd.DataFrame:
    """The literature columns as text, exactly as docs/algorithm.md section 10 prints them ('' = n/a)."""
    return pd.read_csv(LITERATURE_PATH, dtype=str, keep_default_na=False).set_index("benchmark")


def applies(exp: ExperimentReport) -> bool:
    """An alternative-protocol experiment with PPPTS or PT in which XCSF or KACS ran (a
    campaign of variants alone, such as compacted KACS, would get a table of n/a)."""
    return (exp.protocol == "alternative" and pair_ran(exp)
            and any(c.benchmark.lower() in SUPRB_ONLY for c in exp.cells))


def _cells(exp: ExperimentReport):
    literature = load_literature()
    order = list(literature.index)
    chosen = [c for c in exp.cells if c.benchmark.lower() in literature.index and c.plain_variant]
    return sorted(chosen, key=lambda c: order.index(c.benchmark.lower())), literature


def _pm(mean_text: str, sd_text: str) -> str:
    return "n/a" if not mean_text else f"{mean_text} ± {sd_text}"


def suprb_frame(exp: ExperimentReport) -> pd.DataFrame:
    """One row per dataset: our means and SDs (numbers) and the literature's (text)."""
    cells, literature = _cells(exp)
    stats_by = exp.cell_stats.set_index(["cell", "metric"])
    records = []
    for cell in cells:
        rec = {"benchmark": cell.benchmark.lower(), "cell": cell.label, "N": cell.N}
        for method in DEFAULT_PAIR:
            for metric in ("test_mse", "rules"):
                s = stats_by.loc[(cell.label, metric)]
                rec[f"{method}_{metric}_mean"] = s[f"{method}_mean"]
                rec[f"{method}_{metric}_sd"] = s[f"{method}_sd"]
            rec[f"{method}_runs"] = int(stats_by.loc[(cell.label, "test_mse")][f"{method}_runs"])
        for col, value in literature.loc[cell.benchmark.lower()].items():
            rec[col] = float(value) if value else math.nan
        records.append(rec)
    return pd.DataFrame.from_records(records)


def suprb_table(exp: ExperimentReport) -> Table:
    cells, literature = _cells(exp)
    stats_by = exp.cell_stats.set_index(["cell", "metric"])
    headers = ["dataset", "N", "XCSF (ours): test MSE", "rules", "KACS (ours): test MSE", "rules", "runs",
               "XCSF compacted [lit.]: test MSE", "rules", "SupRB-ES [lit.]: test MSE", "rules"]
    rows = []
    for cell in cells:
        row = [tcell(DISPLAY.get(cell.benchmark.lower(), cell.label)), tcell(cell.N if cell.N is not None else "n/a")]
        runs = 0
        for method in DEFAULT_PAIR:
            for metric in ("test_mse", "rules"):
                s = stats_by.loc[(cell.label, metric)]
                mean, sd = s[f"{method}_mean"], s[f"{method}_sd"]
                runs = max(runs, int(s[f"{method}_runs"]))
                row.append(tcell("n/a" if not math.isfinite(mean) else f"{fmt_value(metric, mean)} ± {fmt_sd(metric, sd)}"))
        row.append(tcell(runs))
        lit = literature.loc[cell.benchmark.lower()]
        row += [
            tcell(_pm(lit["xcsf_compacted_mse_mean"], lit["xcsf_compacted_mse_sd"])),
            tcell(_pm(lit["xcsf_compacted_rules_mean"], lit["xcsf_compacted_rules_sd"])),
            tcell(_pm(lit["suprb_mse_mean"], lit["suprb_mse_sd"])),
            tcell(_pm(lit["suprb_rules_mean"], lit["suprb_rules_sd"])),
        ]
        rows.append(row)
    caption = (
        f"{exp.name}: test MSE on the standardized target and macro-rule count, mean ± SD over "
        f"runs of the alternative protocol (8 splits x 8 seeds, 75/25), our XCSF and KACS without "
        f"compaction, beside the values of Heider et al. (2025) for XCSF after compaction and "
        f"SupRB-ES [lit.]. The literature values come from another study: descriptive only, no "
        f"test, no ranks."
    )
    return Table(f"{exp.name}: comparison with SupRB", caption, headers, rows, n_left=1,
                 label=f"tab:{slug(exp.name)}-suprb")
