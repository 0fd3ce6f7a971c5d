"""The results tables of README.md and docs/*.md, rendered from the committed runs.

A document marks each table it shows as

    <!-- table: NAME -->
    ...the table...
    <!-- end table -->

and `make docs-tables` (`python -m kacs_cli.reporting.doctables`) rewrites what stands between
the markers from the committed runs of `results/` and the published tables shipped as package data; a test
renders them again and fails when a committed document differs. A number in a document is
therefore either in such a table or a figure the same test checks (`claims`), so the prose
cannot drift from the runs it describes.

Every statistic follows docs/algorithm.md section 11 (paired two-sided Wilcoxon over runs,
alpha = 0.05) through `kacs_cli.reporting.stats`; this module only selects and formats.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from kacs_cli.experiments.campaign import results
from kacs_cli.reporting import kstats, stats
from kacs_cli.reporting.paper import load_paper_table
from kacs_cli.reporting.suprb import load_literature

ALPHA = stats.ALPHA
MARKER = re.compile(r"(<!-- table: ([a-z0-9-]+) -->\n)(.*?)(<!-- end table -->)", re.S)
# A number in prose: <!-- value: NAME [ARGUMENT] -->text<!-- end --> on one line.
VALUE = re.compile(r"(<!-- value: ([a-z0-9-]+)(?: ([^ >]+))? -->)([^\n]*?)(<!-- end -->)")
REAL = ("asn", "ccpp", "cs", "eec", "pppts", "pt")
MAIN_BENCHMARKS = ("f1", "f2", "f3", "f4", "asn", "ccpp", "cs", "eec")
METRICS = (("test_mae", "test MAE"), ("train_mae", "train MAE"), ("rules", "rules"), ("params", "params"),
           ("aic", "AIC"))


# ---- loading and small statistics -------------------------------------------------------

class Runs:
    """The committed runs.csv files below a project root, read once each."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._cache: dict[str, pd.DataFrame] = {}

    def curves(self, folder: str) -> pd.DataFrame:
        key = folder + "#curves"
        if key not in self._cache:
            self._cache[key] = pd.read_csv(self.root / "results" / folder / results.AGGREGATE_FILE)
        return self._cache[key]

    def __call__(self, folder: str) -> pd.DataFrame:
        if folder not in self._cache:
            self._cache[folder] = pd.read_csv(results.runs_path(self.root / "results" / folder))
        return self._cache[folder]


def _values(runs: pd.DataFrame, bench: str, method: str, metric: str) -> pd.Series:
    sel = runs[(runs.benchmark == bench) & (runs.method == method)]
    return sel.set_index("run")[metric].sort_index()


def _pair(runs, bench, a, b, metric):
    x, y = _values(runs, bench, a, metric), _values(runs, bench, b, metric)
    common = x.index.intersection(y.index)
    return x.loc[common].to_numpy(float), y.loc[common].to_numpy(float)


def _p(runs, bench, a, b, metric) -> float:
    x, y = _pair(runs, bench, a, b, metric)
    return stats.wilcoxon_p(x, y)


def _symbol(runs, bench, metric, a="xcsf", b="kacs") -> str:
    x, y = _pair(runs, bench, a, b, metric)
    return stats.symbol(x, y)


def _mean(runs, bench, method, metric) -> float:
    return float(_values(runs, bench, method, metric).mean())


def _lower(runs, bench, a, b, metric="test_mae") -> bool:
    """Method a's metric significantly lower than b's (paired Wilcoxon over runs, alpha)."""
    return _p(runs, bench, a, b, metric) < ALPHA and _mean(runs, bench, a, metric) < _mean(runs, bench, b, metric)


def _sd(runs, bench, method, metric) -> float:
    return float(_values(runs, bench, method, metric).std(ddof=1))


def _holm(pvalues: dict[str, float]) -> dict[str, float]:
    order = sorted(pvalues, key=lambda k: pvalues[k])
    out, running, m = {}, 0.0, len(order)
    for i, k in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[k]))
        out[k] = running
    return out


# ---- formats -----------------------------------------------------------------------------

def _int(x: float) -> str:
    return f"{x:,.0f}"


def _dec(x: float, d: int = 4) -> str:
    return f"{x:.{d}f}"


def _msd(x: float, sd: float, d: int = 4) -> str:
    return f"{x:.{d}f} ± {sd:.{d}f}"


def _name(bench: str) -> str:
    return bench.upper() if bench in REAL else bench


def _pfmt(p: float) -> str:
    if not math.isfinite(p):
        return "n/a"
    if p < 1e-8:
        return "< 1e-8"
    if p < 1e-3:
        mant, exp = f"{p:.0e}".split("e")
        return f"{mant}e{int(exp)}"
    return f"{p:.2g}" if p < 0.995 else "1.0"


def _table(headers: list[str], rows: list[list[str]], align: list[str]) -> str:
    sep = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(sep[a] for a in align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


# ---- the tables --------------------------------------------------------------------------

def main_paper(runs: Runs) -> str:
    """Our main experiment beside the published table: every benchmark and metric."""
    r = runs("paper/main")
    pub = load_paper_table().set_index(["benchmark", "metric"])
    rows = []
    for bench in MAIN_BENCHMARKS:
        for i, (metric, label) in enumerate(METRICS):
            p = pub.loc[(bench, metric)]
            if metric.endswith("mae"):
                f = lambda m, s: _msd(m, s)
            else:
                f = lambda m, s: f"{_int(m)} ± {_int(s)}"
            ours_v = _symbol(r, bench, metric)
            pub_v = stats.verdict(float(p.wilcoxon_p), float(p.xcsf_mean - p.kacs_mean))
            rows.append([bench if i == 0 else "", label,
                         f(_mean(r, bench, "xcsf", metric), _sd(r, bench, "xcsf", metric)),
                         f(p.xcsf_mean, p.xcsf_sd),
                         f(_mean(r, bench, "kacs", metric), _sd(r, bench, "kacs", metric)),
                         f(p.kacs_mean, p.kacs_sd), f"{ours_v} / {pub_v}"])
    return _table(["benchmark", "metric", "XCSF ours", "XCSF published", "KACS ours", "KACS published",
                   "verdict ours / published"], rows, ["l", "l", "r", "r", "r", "r", "c"])


def _fidelity(runs: Runs) -> tuple[int, int, str, float, float]:
    """How many of the main means lie within max(3 SE, 5 %) of the published ones, and the
    largest deviation in standard errors."""
    r = runs("paper/main")
    pub = load_paper_table().set_index(["benchmark", "metric"])
    inside, total, worst = 0, 0, ("", 0.0, 0.0)
    for bench in MAIN_BENCHMARKS:
        for metric, label in METRICS:
            p = pub.loc[(bench, metric)]
            for method in ("xcsf", "kacs"):
                v = _values(r, bench, method, metric)
                m_pub, sd_pub = float(p[f"{method}_mean"]), float(p[f"{method}_sd"])
                se = math.sqrt(sd_pub ** 2 / 30 + v.std(ddof=1) ** 2 / len(v))
                dev = abs(v.mean() - m_pub)
                total += 1
                inside += dev <= max(3 * se, 0.05 * abs(m_pub))
                z = dev / se
                if z > worst[1]:
                    worst = (f"{stats_label(method)} {label} on {_name(bench)}", z, (v.mean() - m_pub) / abs(m_pub))
    return inside, total, worst[0], worst[1], worst[2]


def stats_label(method: str) -> str:
    return {"kacs": "KACS", "xcsf": "XCSF"}.get(method, method)


def main_fidelity(runs: Runs) -> str:
    r = runs("paper/main")
    pub = load_paper_table().set_index(["benchmark", "metric"])
    inside, total, worst, z, rel = _fidelity(runs)
    agree = []
    for metric, label in METRICS[:1] + METRICS[2:4]:
        same = sum(_symbol(r, b, metric) == stats.verdict(float(pub.loc[(b, metric)].wilcoxon_p),
                                                          float(pub.loc[(b, metric)].xcsf_mean - pub.loc[(b, metric)].kacs_mean))
                   for b in MAIN_BENCHMARKS)
        agree.append(f"{label} {same} of 8")
    rows = [["means within max(3 SE, 5 %) of the published ones", f"{inside} of {total}"],
            ["largest deviation", f"{worst}: {rel * 100:+.1f} %, {z:.1f} SE"],
            ["Wilcoxon verdicts as published", ", ".join(agree)]]
    return _table(["check", "result"], rows, ["l", "l"])


def sample_scaling(runs: Runs) -> str:
    r = runs("paper/sample_scaling")
    rows = []
    for bench in sorted(r.benchmark.unique(), key=lambda b: int(b.split("-s")[1])):
        ns = int(r[r.benchmark == bench].samples.iloc[0])
        rows.append([_int(ns)] + [_msd(_mean(r, bench, m, "test_mae"), _sd(r, bench, m, "test_mae")) for m in ("xcsf", "kacs")]
                    + [_int(_mean(r, bench, m, k)) for k in ("rules", "params") for m in ("xcsf", "kacs")])
    return _table(["N_S", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF", "params KACS"],
                  rows, ["r"] * 7)


def _dim_cells(r: pd.DataFrame) -> list[str]:
    first = r.drop_duplicates("benchmark").set_index("benchmark")
    return sorted(first.index, key=lambda b: (int(first.loc[b, "n"]), int(first.loc[b, "N"])))


def dim_scaling(runs: Runs) -> str:
    r = runs("paper/dim_scaling")
    first = r.drop_duplicates("benchmark").set_index("benchmark")
    rows = []
    for bench in _dim_cells(r):
        rows.append([str(int(first.loc[bench, "n"])), _int(first.loc[bench, "N"])]
                    + [_dec(_mean(r, bench, m, "test_mae")) for m in ("xcsf", "kacs")]
                    + [_int(_mean(r, bench, m, k)) for k in ("rules", "params") for m in ("xcsf", "kacs")]
                    + [_symbol(r, bench, "test_mae")])
    return _table(["n", "N", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF",
                   "params KACS", "test MAE: XCSF vs KACS"], rows, ["r"] * 8 + ["c"])


def f3_variants(runs: Runs) -> str:
    r = runs("paper/f3_variants")
    rows = []
    for bench in ("f3-rotated", "f3-translated", "f3-scaled"):
        rows.append([bench.split("-")[1]] + [_msd(_mean(r, bench, m, "test_mae"), _sd(r, bench, m, "test_mae"))
                                             for m in ("xcsf", "kacs")]
                    + [_symbol(r, bench, "test_mae")] + [_int(_mean(r, bench, m, "rules")) for m in ("xcsf", "kacs")])
    return _table(["variant", "test MAE XCSF", "test MAE KACS", "verdict", "rules XCSF", "rules KACS"], rows,
                  ["l", "r", "r", "c", "r", "r"])


def alt_protocol(runs: Runs) -> str:
    r = runs("paper/alt_protocol")
    rows = []
    for bench in MAIN_BENCHMARKS:
        rows.append([_name(bench)] + [_msd(_mean(r, bench, m, "test_mse"), _sd(r, bench, m, "test_mse")) for m in ("xcsf", "kacs")]
                    + [_symbol(r, bench, "test_mse")] + [_int(_mean(r, bench, m, "rules")) for m in ("xcsf", "kacs")]
                    + [_symbol(r, bench, "rules")])
    return _table(["benchmark", "test MSE XCSF", "test MSE KACS", "verdict", "rules XCSF", "rules KACS", "verdict"],
                  rows, ["l", "r", "r", "c", "r", "r", "c"])


def suprb(runs: Runs) -> str:
    alt, own = runs("paper/alt_protocol"), runs("paper/suprb")
    lit = load_literature()  # text, as the article prints it ('' = n/a)
    rows = []
    for bench in REAL:
        r = own if bench in set(own.benchmark) else alt
        N = int(r[r.benchmark == bench].N.iloc[0])
        cells = [_name(bench), str(N)]
        for m in ("xcsf", "kacs"):
            cells += [_msd(_mean(r, bench, m, "test_mse"), _sd(r, bench, m, "test_mse")), _int(_mean(r, bench, m, "rules"))]
        cells.append(_symbol(r, bench, "test_mse"))
        L = lit.loc[bench]
        if not L.xcsf_compacted_mse_mean:
            cells.append("n/a")
        else:
            cells.append(f"{L.xcsf_compacted_mse_mean} ± {L.xcsf_compacted_mse_sd}, "
                         f"{_int(float(L.xcsf_compacted_rules_mean))} rules")
        cells += [f"{L.suprb_mse_mean} ± {L.suprb_mse_sd}", L.suprb_rules_mean]
        rows.append(cells)
    return _table(["dataset", "N", "XCSF (ours): test MSE", "rules", "KACS (ours): test MSE", "rules",
                   "XCSF vs KACS", "XCSF compacted [lit.]", "SupRB-ES [lit.]: test MSE", "rules"],
                  rows, ["l", "r", "r", "r", "r", "r", "c", "r", "r", "r"])


def suprb_literature(runs: Runs) -> str:
    """The literature values the article quotes (package data, verbatim)."""
    lit = load_literature()
    rows = []
    for bench, L in lit.iterrows():
        def pm(m, sd):
            return f"{L[m]} ± {L[sd]}" if L[m] else "n/a"
        rows.append([_name(bench), pm("xcsf_compacted_mse_mean", "xcsf_compacted_mse_sd"),
                     pm("xcsf_compacted_rules_mean", "xcsf_compacted_rules_sd"),
                     pm("suprb_mse_mean", "suprb_mse_sd"), pm("suprb_rules_mean", "suprb_rules_sd")])
    return _table(["dataset", "XCSF after compaction: test MSE", "rules", "SupRB-ES: test MSE", "rules"], rows,
                  ["l", "l", "l", "l", "l"])


def adaptive_f3(runs: Runs) -> str:
    r = runs("adaptive")
    cells = [b for b in r.benchmark.unique() if b.startswith("f3-n")]
    cells.sort(key=lambda b: int(b[4:]))
    methods = ("xcsf", "kacs", "kacs-guideline", "kacs-adaptive")
    rows = []
    for bench in cells:
        means = {m: _mean(r, bench, m, "test_mae") for m in methods}
        best = min(round(v, 3) for v in means.values())
        row = [bench[4:]]
        for m in methods:
            txt = f"{means[m]:.3f}"
            row.append((f"**{txt}**" if round(means[m], 3) == best else txt) + f" ({_int(_mean(r, bench, m, 'rules'))})")
        row.append(_int(_mean(r, bench, "kacs-adaptive", "final_N")))
        for other in ("kacs-guideline", "kacs"):
            x, y = _pair(r, bench, "kacs-adaptive", other, "test_mae")
            row.append("1 (same runs)" if np.array_equal(x, y) else _pfmt(stats.wilcoxon_p(x, y)))
        rows.append(row)
    return _table(["n", "XCSF", "KACS N = 6400", "KACS guideline N", "adaptive KACS", "final N (mean)",
                   "p vs guideline", "p vs 6400"], rows, ["r"] * 8)


def adaptive_targets(runs: Runs) -> str:
    """Adaptive KACS against the budget each target names, at 30 paired runs."""
    r = runs("adaptive")
    rows = []
    for bench, other in [("f3-n14", "kacs"), ("f3-n16", "kacs-guideline"), ("f3-n18", "kacs-guideline"),
                         ("f3-n20", "kacs-guideline")]:
        x, y = _pair(r, bench, "kacs-adaptive", other, "test_mae")
        rx, ry = _pair(r, bench, "kacs-adaptive", other, "rules")
        diff = x.mean() - y.mean()
        rows.append([f"f3, n = {bench[4:]}", "guideline N" if other == "kacs-guideline" else "N = 6400",
                     f"{x.mean():.3f}", f"{y.mean():.3f}", f"{diff:+.3f} ({100 * diff / y.mean():+.1f} %)",
                     _pfmt(stats.wilcoxon_p(x, y)), f"{100 * rx.mean() / ry.mean():.0f} %",
                     f"{int((_values(r, bench, 'kacs-adaptive', 'final_N') > _values(r, bench, 'kacs-adaptive', 'N')).sum())} of {len(x)}"])
    grew, total, same = 0, 0, True
    for bench in MAIN_BENCHMARKS:
        b = bench if bench != "f3" else "f3-published"
        v = r[(r.benchmark == b) & (r.method == "kacs-adaptive")]
        grew += int((v.final_N > v.N).sum())
        total += len(v)
        for metric in ("test_mae", "train_mae", "rules"):
            same = same and np.array_equal(*_pair(r, b, "kacs-adaptive", "kacs", metric))
    rows.append(["eight main benchmarks", "N = 6400", "", "", "identical runs" if same else "differ", "", "",
                 f"{grew} of {total}"])
    return _table(["cell", "against", "test MAE adaptive", "test MAE other", "difference", "p",
                   "macro-rules, adaptive / other", "runs whose budget grew"], rows, ["l", "l", "r", "r", "r", "r", "r", "r"])


def adaptive_warmup(runs: Runs) -> str:
    """Test MAE at iteration 10,000 (the curves), adaptive KACS against N = 6400."""
    curves = runs.curves("adaptive")
    at = curves[curves.iteration == 10_000]

    def values(cell: str, method: str) -> pd.Series:
        return at[(at.cell == cell) & (at.method == method)].set_index("run").test_mae.sort_index()
    rows = []
    main = []
    for cell in MAIN_BENCHMARKS:
        label = cell if cell != "f3" else "f3-published"
        main.append(float((values(label, "kacs-adaptive") - values(label, "kacs")).abs().max()))
    for cell, name in (("f3-n16", "f3, n = 16"), ("f3-n18", "f3, n = 18"), ("f3-n20", "f3, n = 20"), ("pt", "PT (n = 18)")):
        x, y = values(cell, "kacs-adaptive"), values(cell, "kacs")
        rows.append([name, f"{x.mean():.3f}", f"{y.mean():.3f}", _pfmt(stats.wilcoxon_p(x.to_numpy(), y.to_numpy()))])
    rows.append(["eight main benchmarks", "identical to N = 6400" if max(main) == 0 else f"max difference {max(main):.3g}",
                 "", ""])
    return _table(["cell", "adaptive KACS", "KACS N = 6400", "p"], rows, ["l", "r", "r", "r"])


BASELINE_LABELS = {"kacs": "KACS", "xcsf": "XCSF", "xcsf-lib": "xcsf-lib", "ridge": "ridge", "knn": "kNN",
                   "rf": "random forest", "gbr": "gradient boosting", "mlp": "MLP", "svr": "SVR", "kan": "KAN",
                   "kacs-refined": "refined KACS", "kacs-quantile-refined": "refined KACS, quantile inputs"}


def _methods(r: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(r.method))


def _main_ranks(r: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Each method's mean test MAE per main benchmark, and their average ranks (best first)."""
    means = pd.DataFrame({m: {b: _mean(r, b, m, "test_mae") for b in MAIN_BENCHMARKS} for m in _methods(r)})
    return means, stats.average_ranks(means).sort_values()


def baselines(runs: Runs, folder: str = "baselines") -> str:
    r = runs(folder)
    methods = _methods(r)
    means, ranks = _main_ranks(r)
    rows = []
    for m in methods:
        row = [m if m not in ("kacs", "xcsf") else m.upper()]
        for b in MAIN_BENCHMARKS:
            txt = f"{means.loc[b, m]:.3f}"
            if round(means.loc[b, m], 3) == round(means.loc[b].min(), 3):
                txt = f"**{txt}**"
            row.append(f"{txt} ({_int(_mean(r, b, m, 'params'))})")
        sec = r[r.method == m].seconds.mean()
        row += [f"{ranks[m]:.2f}", f"{sec:.1f}" if sec >= 1 else f"{sec:.2g}"]
        rows.append(row)
    return _table(["method"] + [_name(b) for b in MAIN_BENCHMARKS] + ["avg rank", "s per run"], rows,
                  ["l"] + ["r"] * 10)


def regressors(runs: Runs) -> str:
    return baselines(runs, "regressors")


def _verdicts(r: pd.DataFrame, control: str = "kacs",
              benchmarks: tuple[str, ...] = MAIN_BENCHMARKS) -> dict[str, dict[str, list[str]]]:
    """Per benchmark, each method against the control over runs, Holm over the k-1."""
    others = [m for m in _methods(r) if m != control]
    out: dict[str, dict[str, list[str]]] = {m: {"better": [], "level": [], "worse": []} for m in others}
    for b in benchmarks:
        ps, diffs = {}, {}
        for m in others:
            x, y = _pair(r, b, m, control, "test_mae")
            ps[m], diffs[m] = stats.wilcoxon_p(x, y), float(np.mean(x - y))
        for m, p in _holm(ps).items():
            key = "level" if p >= ALPHA else ("better" if diffs[m] > 0 else "worse")  # KACS better / worse
            out[m][key].append(_name(b))
    return out


def baselines_verdicts(runs: Runs, folder: str = "baselines", control: str = "kacs") -> str:
    v = _verdicts(runs(folder), control)
    order = sorted(v, key=lambda m: (-len(v[m]["better"]), len(v[m]["worse"])))

    def cell(names):
        return f"{len(names)} ({', '.join(names)})" if 0 < len(names) <= 3 else str(len(names))
    rows = [[("XCSF (ours)" if m == "xcsf" else BASELINE_LABELS[m]), cell(v[m]["better"]), cell(v[m]["level"]),
             cell(v[m]["worse"])] for m in order]
    who = BASELINE_LABELS[control]
    return _table(["against", f"{who} better on", "level on", f"{who} worse on"], rows, ["l", "l", "l", "l"])


def regressors_verdicts(runs: Runs) -> str:
    return baselines_verdicts(runs, "regressors", "kacs-refined")


def summary(runs: Runs) -> str:
    """One line per experiment: its headline, computed, and its page."""
    rows = []
    inside, total, *_ = _fidelity(runs)
    m = runs("paper/main")
    lower = sum(_symbol(m, b, "test_mae") == "-" for b in MAIN_BENCHMARKS)
    higher = sum(_symbol(m, b, "test_mae") == "+" for b in MAIN_BENCHMARKS)
    ratio = [_mean(m, b, "xcsf", "params") / _mean(m, b, "kacs", "params") for b in MAIN_BENCHMARKS]
    rows.append(["[main](docs/experiments.md#1-main-experiment)", _int(len(m)),
                 f"KACS's test MAE is lower than XCSF's on {lower} of 8 benchmarks, "
                 + ("no significant difference on the others" if higher == 0 else f"higher on {higher}")
                 + f", with {min(ratio):.1f} to {max(ratio):.0f} times fewer parameters; {inside} of {total} means within "
                 f"max(3 SE, 5 %) of the published ones"])
    s = runs("paper/sample_scaling")
    cells = list(s.benchmark.unique())
    lower = sum(_symbol(s, b, "test_mae") == "-" for b in cells)
    ratio = [_mean(s, b, "xcsf", "params") / _mean(s, b, "kacs", "params") for b in cells]
    rows.append(["[sample-size scaling](docs/experiments.md#2-sample-size-scaling)", _int(len(s)),
                 f"KACS lower test MAE at {lower} of {len(cells)} sample sizes, {min(ratio):.0f} to "
                 f"{max(ratio):.0f} times fewer parameters"])
    d = runs("paper/dim_scaling")
    fixed = [b for b in _dim_cells(d) if "-N" not in b]
    better = [int(b[4:]) for b in fixed if _symbol(d, b, "test_mae") == "-"]
    worse = [int(b[4:]) for b in fixed if _symbol(d, b, "test_mae") == "+"]
    guide = [b for b in _dim_cells(d) if "-N" in b]
    gbetter = sum(_symbol(d, b, "test_mae") == "-" for b in guide)
    rows.append(["[dimensional scaling](docs/experiments.md#3-dimensional-scaling)", _int(len(d)),
                 f"at N = 6400 KACS is better for n = {min(better)}-{max(better)} and worse from n = {min(worse)}; "
                 f"with the guideline N = 24n(2n+1) better again at {gbetter} of {len(guide)} (n = 16, 18, 20)"])
    f = runs("paper/f3_variants")
    lower = sum(_symbol(f, b, "test_mae") == "-" for b in f.benchmark.unique())
    rows.append(["[f3 variants](docs/experiments.md#4-f3-variants)", _int(len(f)),
                 f"KACS lower test MAE on {lower} of 3 variants (rotated, translated, scaled)"])
    a = runs("paper/alt_protocol")
    lower = sum(_symbol(a, b, "test_mse") == "-" for b in MAIN_BENCHMARKS)
    rows.append(["[alternative protocol](docs/experiments.md#5-alternative-protocol)", _int(len(a)),
                 f"KACS lower test MSE on {lower} of 8 benchmarks (64 paired runs each)"])
    sp = runs("paper/suprb")
    sym = {b: _symbol(sp, b, "test_mse") for b in ("pppts", "pt")}
    rows.append(["[SupRB comparison](docs/experiments.md#6-suprb-comparison)", _int(len(sp)),
                 f"PPPTS: KACS {'lower' if sym['pppts'] == '-' else 'not lower'} test MSE than XCSF; "
                 f"PT (n = 18): XCSF {'lower' if sym['pt'] == '+' else 'not lower'}; both far from SupRB's rule counts"])
    ad = runs("adaptive")
    adm = {mm: _mean(ad, "f3-n20", mm, "test_mae") for mm in ("kacs", "kacs-adaptive", "kacs-guideline")}
    share = _mean(ad, "f3-n20", "kacs-adaptive", "rules") / _mean(ad, "f3-n20", "kacs-guideline", "rules")
    rows.append(["[adaptive budget](docs/experiments.md#7-adaptive-budget-beyond-the-article)", _int(len(ad)),
                 f"f3 at n = 20: test MAE {adm['kacs-adaptive']:.3f} against {adm['kacs']:.3f} at N = 6400 and "
                 f"{adm['kacs-guideline']:.3f} with the hand-set guideline N, with {100 * share:.0f} % of its rules"])
    b = runs("baselines")
    bm = _methods(b)
    _, ranks = _main_ranks(b)
    place = list(ranks.index).index("kacs") + 1
    lead = [BASELINE_LABELS[mm] for mm in ranks.index[:3]]
    v = _verdicts(b)
    rows.append(["[baselines](docs/baselines.md#results)", _int(len(b)),
                 f"KACS's average rank is {ranks['kacs']:.2f}, {place}th of {len(bm)} ({', '.join(lead)} lead); per "
                 f"benchmark it beats XCSF on {len(v['xcsf']['better'])} and xcsf-lib on "
                 f"{len(v['xcsf-lib']['better'])} of 8, and loses to gradient boosting on {len(v['gbr']['worse'])}"])
    g = runs("regressors")
    gm = _methods(g)
    _, ranks = _main_ranks(g)
    better = sum(_lower(g, bb, "kacs-refined", "kacs") for bb in MAIN_BENCHMARKS)
    lead = [BASELINE_LABELS[mm] for mm in ranks.index[:2]]
    rows.append(["[regressors](docs/baselines.md#with-refinement-and-a-converged-mlp)", _int(len(g)),
                 f"refined KACS has a lower test MAE than KACS on {better} of 8 benchmarks (same rules); "
                 f"average rank {ranks['kacs-refined']:.2f} ({ranks['kacs-quantile-refined']:.2f} with "
                 f"quantile inputs) among {len(gm)} methods, against {ranks['kacs']:.2f} for KACS "
                 f"({', '.join(lead)} lead)"])
    rb = runs("robustness")
    v = _verdicts(rb, control="xcsf", benchmarks=ROBUSTNESS_CELLS)
    quantile_better = sum(_lower(rb, c, "kacs-quantile-refined", "kacs-refined") for c in ROBUSTNESS_CELLS)
    rows.append(["[robustness](docs/refinement.md#2-input-transforms)", _int(len(rb)),
                 f"f1-f4 with skewed or discrete inputs: refined KACS better than XCSF on "
                 f"{len(v['kacs-refined']['worse'])} of 8 cells (KACS on {len(v['kacs']['worse'])}), worse on "
                 f"{len(v['kacs-refined']['better'])}; the quantile transform better than min-max on "
                 f"{quantile_better} of 8 (refined KACS)"])
    cp = runs("compaction")
    lower = worse_sw = kacs_wins = 0
    kept = []
    for bench in MAIN_BENCHMARKS:
        rules, k, before, after = _compacted(cp, bench, "kacs-piecewise")
        kept.append(np.max(k / rules))
        lower += _verdict(after, before).startswith("better")
        _, _, sw_before, sw_after = _compacted(cp, bench, "kacs-single-winner")
        worse_sw += _verdict(sw_after, sw_before).startswith("worse")
        _, _, _, x_after = _compacted(cp, bench, "xcsf-closest")
        kacs_wins += _verdict(after, x_after).startswith("better")
    rows.append(["[compaction](docs/compaction.md#5-the-campaign)", _int(len(cp)),
                 f"compacted to at most {100 * max(kept):.0f} % of its rules, KACS has a lower test MAE than "
                 f"uncompacted on {lower} of 8 benchmarks; single-winner compaction raises it on {worse_sw} of 8; "
                 f"compacted KACS beats compacted XCSF (closest classifier) on {kacs_wins} of 8"])
    return _table(["experiment", "runs", "headline (from the committed runs)"], rows, ["l", "r", "l"])


ROBUSTNESS_CELLS = tuple(f"f{k}-{law}" for law in ("skewed", "discrete") for k in range(1, 5))
ROBUSTNESS_LABELS = {"xcsf": "XCSF", "kacs": "KACS", "kacs-refined": "KACS refined",
                     "xcsf-quantile": "XCSF, quantile inputs",
                     "kacs-quantile-refined": "KACS refined, quantile inputs"}


def robustness(runs: Runs) -> str:
    """Mean ± SD of the test MAE per input-law cell and method; best mean in bold."""
    r = runs("robustness")
    methods = _methods(r)
    rows = []
    for cell in ROBUSTNESS_CELLS:
        means = {m: _mean(r, cell, m, "test_mae") for m in methods}
        best = min(round(v, 3) for v in means.values())
        row = [cell]
        for m in methods:
            txt = _msd(means[m], _sd(r, cell, m, "test_mae"), 3)
            row.append(f"**{txt}**" if round(means[m], 3) == best else txt)
        rows.append(row)
    return _table(["cell"] + [ROBUSTNESS_LABELS[m] for m in methods], rows, ["l"] + ["r"] * len(methods))


def robustness_verdicts(runs: Runs) -> str:
    """Each method against XCSF per cell: paired two-sided Wilcoxon over the runs, Holm over
    the methods compared on the cell; better / level / worse than XCSF."""
    r = runs("robustness")
    v = _verdicts(r, control="xcsf", benchmarks=ROBUSTNESS_CELLS)
    rows = [[ROBUSTNESS_LABELS[m], str(len(v[m]["worse"])), str(len(v[m]["level"])),
             str(len(v[m]["better"])) + (f" ({', '.join(v[m]['better'])})" if 0 < len(v[m]["better"]) <= 3 else "")]
            for m in v]
    return _table(["method", "better than XCSF on", "level on", "worse than XCSF on"], rows, ["l", "r", "r", "l"])


BUDGETS = ("100k", "200k", "400k")


def budget(runs: Runs) -> str:
    """Refined KACS at three iteration budgets: evolved and refined mean test MAE, seconds."""
    present = [b for b in BUDGETS if results.runs_path(runs.root / "results" / "budget" / b).is_file()]
    rows = []
    for bench in MAIN_BENCHMARKS:
        row = [_name(bench)]
        for b in BUDGETS:
            if b not in present:
                row += ["—", "—"]
                continue
            r = runs(f"budget/{b}")
            here = r[r.benchmark == bench]
            row += [f"{here.evolved_test_mae.mean():.4f}", f"{here.test_mae.mean():.4f}"]
        rows.append(row)
    head = ["benchmark"] + [f"{b} {kind}" for b in BUDGETS for kind in ("evolved", "refined")]
    return _table(head, rows, ["l"] + ["r"] * (2 * len(BUDGETS)))


def _compacted(runs: pd.DataFrame, bench: str, method: str):
    """(rules, compacted rules, test MAE, compacted test MAE) of a compacted method's runs on a
    benchmark, by run."""
    sel = runs[(runs.benchmark == bench) & (runs.method == method)].set_index("run").sort_index()
    return (sel.rules.to_numpy(float), sel.compacted_rules.to_numpy(float),
            sel.test_mae.to_numpy(float), sel.compacted_test_mae.to_numpy(float))


def _verdict(after: np.ndarray, before: np.ndarray) -> str:
    """better / level / worse of `after` against `before`: paired two-sided Wilcoxon over runs."""
    p = stats.wilcoxon_p(after, before)
    if not p < ALPHA:
        return f"level (p {_pfmt(p)})"
    return f"{'better' if after.mean() < before.mean() else 'worse'} (p {_pfmt(p)})"


def compaction(runs: Runs) -> str:
    """KACS's compactions on the main benchmarks: rules and test MAE before and after, piecewise
    (ours) and single-winner (the field's), 30 paired runs."""
    r = runs("compaction")
    rows = []
    for bench in MAIN_BENCHMARKS:
        rules, kept, before, after = _compacted(r, bench, "kacs-piecewise")
        _, sw_kept, _, sw_after = _compacted(r, bench, "kacs-single-winner")
        rows.append([_name(bench), _int(rules.mean()), f"{before.mean():.4f}",
                     f"{kept.mean():.1f} ({100 * np.mean(kept / rules):.1f} %)", f"{after.mean():.4f}",
                     f"{100 * (after.mean() / before.mean() - 1):+.1f} %", _verdict(after, before),
                     f"{sw_kept.mean():.1f} ({100 * np.mean(sw_kept / rules):.1f} %)", f"{sw_after.mean():.4f}"])
    head = ["benchmark", "KACS rules", "test MAE", "piecewise: rules (kept)", "test MAE", "change",
            "against KACS", "single-winner: rules (kept)", "test MAE"]
    return _table(head, rows, ["l"] + ["r"] * 5 + ["l", "r", "r"])


def compaction_xcsf(runs: Runs) -> str:
    """XCSF's closest-classifier compaction beside KACS's piecewise one: rules, parameters and
    test MAE of both compacted models, 30 paired runs."""
    r = runs("compaction")
    rows = []
    for bench in MAIN_BENCHMARKS:
        rules, kept, before, after = _compacted(r, bench, "xcsf-closest")
        _, k_kept, _, k_after = _compacted(r, bench, "kacs-piecewise")
        sel = r[(r.benchmark == bench) & (r.method == "xcsf-closest")]
        ksel = r[(r.benchmark == bench) & (r.method == "kacs-piecewise")]
        rows.append([_name(bench), _int(rules.mean()), f"{before.mean():.4f}",
                     f"{kept.mean():.1f} ({100 * np.mean(kept / rules):.1f} %)", f"{after.mean():.4f}",
                     f"{100 * (after.mean() / before.mean() - 1):+.1f} %", _verdict(after, before),
                     _int(sel.compacted_params.mean()), _int(ksel.compacted_params.mean()),
                     _verdict(k_after, after).replace("better", "KACS better").replace("worse", "KACS worse")])
    head = ["benchmark", "XCSF rules", "test MAE", "closest: rules (kept)", "test MAE", "change",
            "against XCSF", "params, XCSF compacted", "params, KACS compacted", "KACS vs XCSF, compacted"]
    return _table(head, rows, ["l"] + ["r"] * 5 + ["l", "r", "r", "l"])


SWEEP = (("kacs-r20", "20 %"), ("kacs-r10", "10 %"), ("kacs-r05", "5 %"), ("kacs-r02", "2 %"), ("kacs-r01", "1 %"))


def compaction_sweep(runs: Runs) -> str:
    """The rule budget swept (runs 0-9): mean compacted rules and test MAE per budget, the
    trained model's and single-winner's beside them (the same runs of results/compaction)."""
    r = runs("compaction_sweep")
    c = runs("compaction")
    c = c[c.run < r.run.max() + 1]
    rows = []
    for bench in MAIN_BENCHMARKS:
        rules, _, before, _ = _compacted(r, bench, SWEEP[0][0])
        row = [_name(bench), f"{_int(rules.mean())} / {before.mean():.4f}"]
        for method, _label in SWEEP:
            _, kept, _, after = _compacted(r, bench, method)
            row.append(f"{kept.mean():.0f} / {after.mean():.4f}")
        _, sw_kept, _, sw_after = _compacted(c, bench, "kacs-single-winner")
        row.append(f"{sw_kept.mean():.0f} / {sw_after.mean():.4f}")
        rows.append(row)
    head = ["benchmark", "trained"] + [f"piecewise {label}" for _, label in SWEEP] + ["single-winner"]
    return _table(head, rows, ["l"] + ["r"] * (len(SWEEP) + 2))


SUPRB_BUDGETS = (("kacs-r10", "10 %"), ("kacs-r02", "2 %"), ("kacs-r01", "1 %"))


def compaction_suprb(runs: Runs) -> str:
    """Compacted KACS beside SupRB-ES's published test MSE and rules: per dataset the compacted
    models' mean test MSE and rules at three budgets, and the smallest of them whose mean test
    MSE is no worse than SupRB-ES's, with its parameters beside SupRB's (rules x (n + 1), the
    count of XCSF's linear-consequent rules, which SupRB's are)."""
    r = runs("compaction_suprb")
    lit = load_literature()
    rows = []
    for bench in REAL:
        here = r[r.benchmark == bench]
        if here.empty:
            continue
        n = int(here.n.iloc[0])
        suprb_mse = float(lit.loc[bench, "suprb_mse_mean"])
        suprb_rules = float(lit.loc[bench, "suprb_rules_mean"])
        row = [_name(bench), str(here.run.nunique()), f"{suprb_mse:.2f}", f"{suprb_rules:.1f}",
               _int(suprb_rules * (n + 1))]
        smallest = None
        for method, _label in SUPRB_BUDGETS:
            sel = here[here.method == method]
            mse, rules = float(sel.compacted_test_mse.mean()), float(sel.compacted_rules.mean())
            row.append(f"{mse:.3f} / {rules:.0f}")
            if mse <= suprb_mse and (smallest is None or rules < smallest):
                smallest = rules
        row.append("none" if smallest is None else f"{smallest:.0f} rules, {_int(2 * smallest)} params")
        rows.append(row)
    head = (["dataset", "runs", "SupRB-ES [lit.]: test MSE", "rules", "params"]
            + [f"KACS {label}: test MSE / rules" for _, label in SUPRB_BUDGETS]
            + ["smallest KACS no worse than SupRB-ES"])
    return _table(head, rows, ["l"] + ["r"] * (4 + len(SUPRB_BUDGETS)) + ["l"])


TABLES: dict[str, Callable[[Runs], str]] = {
    "summary": summary,
    "main-paper": main_paper,
    "main-fidelity": main_fidelity,
    "sample-scaling": sample_scaling,
    "dim-scaling": dim_scaling,
    "f3-variants": f3_variants,
    "alt-protocol": alt_protocol,
    "suprb": suprb,
    "suprb-literature": suprb_literature,
    "adaptive-f3": adaptive_f3,
    "adaptive-targets": adaptive_targets,
    "adaptive-warmup": adaptive_warmup,
    "baselines": baselines,
    "baselines-verdicts": baselines_verdicts,
    "regressors": regressors,
    "regressors-verdicts": regressors_verdicts,
    "robustness": robustness,
    "robustness-verdicts": robustness_verdicts,
    "budget": budget,
    "compaction": compaction,
    "compaction-xcsf": compaction_xcsf,
    "compaction-sweep": compaction_sweep,
    "compaction-suprb": compaction_suprb,
}

# ---- numbers in prose --------------------------------------------------------------------

def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def v_time(runs: Runs, folder: str) -> str:
    total = float(runs(folder).seconds.sum())
    return f"{_hours(total)} of run time recorded, about {_hours(total / 2)} at --jobs 2"


def v_runs(runs: Runs, folder: str) -> str:
    return _int(len(runs(folder)))


def v_dim_n2_params_p(runs: Runs, _=None) -> str:
    return _pfmt(_p(runs("paper/dim_scaling"), "f3-n2", "xcsf", "kacs", "params"))


def v_main_across_rules(runs: Runs, _=None) -> str:
    r = runs("paper/main")
    pub = load_paper_table().set_index(["benchmark", "metric"])
    ours = [(_mean(r, b, "xcsf", "rules"), _mean(r, b, "kacs", "rules")) for b in MAIN_BENCHMARKS]
    theirs = [(float(pub.loc[(b, "rules")].xcsf_mean), float(pub.loc[(b, "rules")].kacs_mean)) for b in MAIN_BENCHMARKS]
    p_ours = stats.wilcoxon_p(*np.array(ours).T)
    p_pub = stats.wilcoxon_p(*np.array(theirs).T)
    return f"p = {p_ours:.4f} here against {p_pub:.4f} from the published means"


ADAPTIVE_LABELS = {"xcsf": "XCSF", "kacs": "N = 6400", "kacs-guideline": "guideline N", "kacs-adaptive": "adaptive"}


def v_adaptive_ranks(runs: Runs, _=None) -> str:
    r = runs("adaptive")
    cells = [b for b in r.benchmark.unique() if b.startswith("f3-n")]
    methods = ["kacs-adaptive", "kacs-guideline", "kacs", "xcsf"]
    matrix = np.array([[_mean(r, b, m, "test_mae") for m in methods] for b in cells])
    f = kstats.friedman(matrix)
    cd = kstats.critical_difference(len(methods), len(cells))
    ranks = dict(zip(methods, f.average_ranks))
    apart = [(a, b) for i, a in enumerate(methods) for b in methods[i + 1:] if abs(ranks[a] - ranks[b]) >= cd]
    pairs = "; ".join(f"{ADAPTIVE_LABELS[a]} and {ADAPTIVE_LABELS[b]} differ by {abs(ranks[a] - ranks[b]):.2f}"
                      for a, b in apart) or "no pair differs by that much"
    return (f"average ranks {', '.join(f'{ADAPTIVE_LABELS[m]} {ranks[m]:.2f}' for m in methods)}; Friedman "
            f"p = {_pfmt(f.p_chi2)}; Nemenyi CD = {cd:.2f}: {pairs}, no other pair")


def v_adaptive_pt(runs: Runs, _=None) -> str:
    r = runs("adaptive")
    a = r[(r.benchmark == "pt") & (r.method == "kacs-adaptive")]
    x, y = _pair(r, "pt", "kacs-adaptive", "kacs", "test_mae")
    rx, ry = _pair(r, "pt", "kacs-adaptive", "kacs", "rules")
    grew = int((a.final_N > a.N).sum())
    return (f"{grew} of {len(a)} runs grew the budget (final N {_int(a.final_N.mean())} on average); test MAE "
            f"{x.mean():.3f} against {y.mean():.3f} at N = 6400 (p = {_pfmt(stats.wilcoxon_p(x, y))}), with "
            f"{100 * (rx.mean() / ry.mean() - 1):+.0f} % macro-rules")


def _baseline_matrix(runs: Runs, folder: str | None = None) -> tuple[list[str], np.ndarray]:
    r = runs(folder or "baselines")
    methods = _methods(r)
    return methods, np.array([[_mean(r, b, m, "test_mae") for m in methods] for b in MAIN_BENCHMARKS])


def v_baselines_friedman(runs: Runs, folder: str | None = None) -> str:
    methods, m = _baseline_matrix(runs, folder)
    f = kstats.friedman(m)
    k, b = len(methods), len(m)
    return (f"χ² = {f.chi2_f:.2f}, df {k - 1}, p = {f.p_chi2:.1e}; Iman-Davenport F = {f.f_f:.2f}, "
            f"df ({k - 1}, {(k - 1) * (b - 1)}), p = {f.p_f:.1e}")


def v_baselines_cd(runs: Runs, folder: str | None = None) -> str:
    methods, m = _baseline_matrix(runs, folder)
    k, b = len(methods), len(m)
    return f"CD = {kstats.nemenyi_q(k):.3f} · sqrt({k} · {k + 1} / (6 · {b})) = {kstats.critical_difference(k, b):.2f}"


def v_baselines_floor(runs: Runs, folder: str | None = None) -> str:
    methods, m = _baseline_matrix(runs, folder)
    k, b = len(methods), len(m)
    return (f"over {b} benchmarks the smallest two-sided Wilcoxon p is 2/2^{b} = {2 / 2 ** b:.4f}, and Holm over "
            f"{k - 1} comparisons makes it at least {kstats.smallest_holm_p(b, k - 1):.3f}, above α = {ALPHA}")


def v_ranks(runs: Runs, folder: str) -> str:
    """The average ranks of a k-method folder's methods over the main benchmarks, best first."""
    _, ranks = _main_ranks(runs(folder))
    return ", ".join(f"{BASELINE_LABELS[m]} {ranks[m]:.2f}" for m in ranks.index)


def v_refined_sd(runs: Runs, folder: str) -> str:
    """The SD of test MAE over runs of KACS and refined KACS on f1-f4, and their mean ratio."""
    r = runs(folder)
    ratios = [_sd(r, b, "kacs-refined", "test_mae") / _sd(r, b, "kacs", "test_mae") for b in MAIN_BENCHMARKS[:4]]
    parts = ", ".join(f"{b} {_sd(r, b, 'kacs', 'test_mae'):.4f} to {_sd(r, b, 'kacs-refined', 'test_mae'):.4f}"
                      for b in MAIN_BENCHMARKS[:4])
    return f"{parts}: {np.mean(ratios):.2f} of KACS's on average"


def v_refine_cost(runs: Runs, folder: str) -> str:
    """Refinement's seconds against the evolution's, over the refined runs of a folder."""
    r = runs(folder)
    r = r[r.method == "kacs-refined"]
    ratio = r.refine_seconds / r.seconds
    per = r.assign(ratio=ratio).groupby("benchmark").ratio.mean()
    worst = per.idxmax()
    return (f"{100 * ratio.mean():.0f} % of the evolution's time on average ({100 * ratio.median():.0f} % median, "
            f"wall time of the same run); most on {_name(worst)} ({100 * per[worst]:.0f} % on average, "
            f"{100 * ratio[r.benchmark == worst].max():.0f} % in its longest run), where 8,611 training rows meet a "
            f"cheap evolution at n = 4")


def v_compaction_targets(runs: Runs, _=None) -> str:
    """The piecewise compaction over the main benchmarks against its targets: at most a tenth of
    the rules, test MAE not significantly worse and at most 5 % higher in the mean."""
    r = runs("compaction")
    kept, level, within, changes = [], 0, 0, {}
    for bench in MAIN_BENCHMARKS:
        rules, k, before, after = _compacted(r, bench, "kacs-piecewise")
        kept.append(np.max(k / rules))
        p = stats.wilcoxon_p(after, before)
        level += not (p < ALPHA and after.mean() > before.mean())
        changes[bench] = after.mean() / before.mean() - 1
        within += changes[bench] <= 0.05
    low, high = min(changes, key=changes.get), max(changes, key=changes.get)
    return (f"at most {100 * max(kept):.1f} % of the rules in any run; test MAE not significantly worse "
            f"on {level} of 8 and at most 5 % higher in the mean on {within} of 8 (mean change from "
            f"{100 * changes[low]:+.1f} % on {_name(low)} to {100 * changes[high]:+.1f} % on {_name(high)})")


def v_compaction_retrained(runs: Runs, _=None) -> str:
    """How many compacted runs retrained exactly the committed main experiment's run: every
    uncompacted column equal, bit for bit."""
    r = runs("compaction")
    main = runs("paper/main").set_index(["benchmark", "method", "run"])
    columns = ["train_mae", "test_mae", "train_mse", "test_mse", "rules", "micro", "params", "aic"]
    plain = {"kacs-piecewise": "kacs", "kacs-single-winner": "kacs", "xcsf-closest": "xcsf"}
    sel = r[r.method.isin(list(plain))]
    keys = list(zip(sel.benchmark, sel.method.map(plain), sel.run))
    same = (sel[columns].to_numpy() == main.loc[keys, columns].to_numpy()).all(axis=1)
    return f"{int(same.sum()):,} of {len(sel):,}"


def v_compaction_cost(runs: Runs, _=None) -> str:
    """Compaction's seconds against the training's, per compacted method."""
    r = runs("compaction")
    parts = []
    for method in ("kacs-piecewise", "kacs-single-winner", "xcsf-closest"):
        sel = r[r.method == method]
        ratio = sel.compacted_seconds / sel.seconds
        per = sel.assign(ratio=ratio).groupby("benchmark").ratio.mean()
        parts.append(f"{method} {100 * ratio.mean():.1f} % on average ({_name(per.idxmax())} "
                     f"{100 * per.max():.1f} %, longest run {100 * ratio.max():.0f} %)")
    return "; ".join(parts)


def v_compaction_vs_single_winner(runs: Runs, _=None) -> str:
    """Per benchmark, the smallest swept piecewise model whose mean test MAE is within 1 % of
    single-winner's (or lower), against single-winner's rules, over the sweep's runs."""
    r = runs("compaction_sweep")
    c = runs("compaction")
    c = c[c.run <= r.run.max()]
    fewer, cases = 0, []
    for bench in MAIN_BENCHMARKS:
        _, sw_kept, _, sw_after = _compacted(c, bench, "kacs-single-winner")
        ok = []
        for method, label in SWEEP:
            _, kept, _, after = _compacted(r, bench, method)
            if after.mean() <= 1.01 * sw_after.mean():
                ok.append((kept.mean(), label, after.mean()))
        if ok:
            rules, label, mae = min(ok)
            fewer += rules < sw_kept.mean()
            cases.append(f"{_name(bench)} {rules:.0f} against {sw_kept.mean():.0f}")
        else:
            cases.append(f"{_name(bench)} none")
    return f"{fewer} of 8 ({', '.join(cases)})"


VALUES: dict[str, Callable[[Runs, str | None], str]] = {
    "time": v_time,
    "runs": v_runs,
    "dim-n2-params-p": v_dim_n2_params_p,
    "main-across-rules": v_main_across_rules,
    "adaptive-ranks": v_adaptive_ranks,
    "adaptive-pt": v_adaptive_pt,
    "baselines-friedman": v_baselines_friedman,
    "baselines-cd": v_baselines_cd,
    "baselines-floor": v_baselines_floor,
    "ranks": v_ranks,
    "refined-sd": v_refined_sd,
    "refine-cost": v_refine_cost,
    "compaction-targets": v_compaction_targets,
    "compaction-cost": v_compaction_cost,
    "compaction-retrained": v_compaction_retrained,
    "compaction-vs-single-winner": v_compaction_vs_single_winner,
}


DOCUMENTS = ("README.md", "docs/*.md")


def documents(root: Path) -> list[Path]:
    root = Path(root)
    out: list[Path] = []
    for pattern in DOCUMENTS:
        out += sorted(root.glob(pattern))
    return out


def render_document(text: str, runs: Runs) -> str:
    """The document with every marked table rendered again."""
    def one(m: re.Match) -> str:
        name = m.group(2)
        if name not in TABLES:
            raise KeyError(f"unknown table {name!r} (known: {', '.join(TABLES)})")
        return m.group(1) + TABLES[name](runs) + m.group(4)

    def value(m: re.Match) -> str:
        name = m.group(2)
        if name not in VALUES:
            raise KeyError(f"unknown value {name!r} (known: {', '.join(VALUES)})")
        return m.group(1) + VALUES[name](runs, m.group(3)) + m.group(5)
    return VALUE.sub(value, MARKER.sub(one, text))


def stale(root: Path) -> list[str]:
    """The documents whose marked tables or values differ from what the committed runs render."""
    runs = Runs(root)
    return [str(p.relative_to(root)) for p in documents(root)
            if render_document(p.read_text(encoding="utf-8"), runs) != p.read_text(encoding="utf-8")]


def update(root: Path) -> list[str]:
    runs = Runs(root)
    changed = []
    for p in documents(root):
        text = p.read_text(encoding="utf-8")
        new = render_document(text, runs)
        if new != text:
            p.write_text(new, encoding="utf-8")
            changed.append(str(p.relative_to(root)))
    return changed


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path.cwd()
    for name in update(root):
        print(f"rewrote the tables of {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
