"""The documents' tables of what no report holds: the settings of docs/configs.md (from their
declarations, kacs_cli/engine/params.py), the index of the committed results folders
(docs/results-index.md), and the files the analysis scripts wrote: structural fidelity
(docs/fidelity/grid.csv, tools/fidelity_grid.py; docs/explain.md), bagging's members and the
smoothness probe (results/bag_choice, results/smoothness_probe; docs/variance.md)."""

from __future__ import annotations

import pandas as pd

from kacs_cli.engine import registry
from kacs_cli.engine.params import DECLARATIONS
from kacs_cli.experiments.campaign import provenance, results
from kacs_cli.reporting import pareto

from tools.doctables.common import Runs, integer, table


def _allowed(declared) -> str:
    if declared.choices:
        return ", ".join(declared.choices)
    if declared.kind is bool:
        return "true, false"
    rules = declared.rule or "any number"
    return f"{rules}, or per input a n + b" if declared.per_input else rules


def _learners(declared) -> str:
    takers = registry.takers(declared.name)
    return "both" if len(takers) == len(registry.names()) else ", ".join(takers)


def t_hyperparameters(_: Runs) -> str:
    """Every hyperparameter with its type, default, allowed values, learners and flag."""
    rows = [[f"`{d.name}`", d.type_name, f"`{d.default!r}`".replace("'", ""), _allowed(d), _learners(d),
             "" if d.switch is None or d.switch == d.name else f"`{d.switch}`", f"`{d.flag}`" if d.flag else "", d.help]
            for d in DECLARATIONS]
    return table(["name", "type", "default", "allowed", "learners", "acts with", "`kacs fit`", "what it is"], rows,
                 "l" * 8)


def _engine(folder, config, methods, refined: bool) -> tuple[str, str, str, str]:
    """The folder's KACS engines, XCSF engines and refinement kernels ("—" without a method of
    that learner, or without a refined run), and its recorded engine (fingerprint prefix, the
    switches that were on, commit) or that none is recorded. Folders without a record were all
    trained before the record existed, by the re-sorting KACS engine, the full-sum XCSF engine
    and the scanning refinement."""
    record = provenance.read(folder)
    used = {pareto.engine_of(config, m) for m in methods} if config is not None else {"kacs", "xcsf"}
    if refined:
        used.add("refinement")
    if record is None:
        old = {"kacs": provenance.RESORTING, "xcsf": provenance.FULL_SUM, "refinement": provenance.SCAN}
        return (*(old[k] if k in used else "—" for k in old), "not recorded")
    switches = [w for w in record.switches if w != provenance.SORTED_SWITCH]
    with_switches = f" ({', '.join(switches)})" if switches else ""
    commit = record.commit
    names = [", ".join(record.engines(which)) if which in used else "—" for which in provenance.ENGINE_FIELDS]
    return (*names, f"`{record.fingerprint[:12]}`{with_switches} at {str(commit)[:7] if commit else 'no commit'}")


def t_results_index(runs: Runs) -> str:
    """Every committed results folder: what its config says it measures, runs, methods, engine."""
    root = runs.root / "results"
    rows = []
    for path in sorted(root.rglob(results.RUNS_FILE)):
        folder = path.parent
        if "reproduce" in folder.relative_to(root).parts:
            continue
        config = results.ResolvedConfig.read(folder)
        description = str((config.data if config else {}).get("description", "")).replace("|", "/")
        frame = runs(folder.relative_to(root).as_posix())
        rows.append([f"`{folder.relative_to(runs.root).as_posix()}`", description, integer(len(frame)),
                     str(frame.method.nunique()), *_engine(folder, config, frame.method.unique(), _refined(frame))])
    return table(["folder", "what it measures (its config's description)", "runs", "methods", "KACS engine",
                  "XCSF engine", "KACS refinement", "engine record"], rows, "llrrllll")


def _refined(frame) -> bool:
    """Whether some run of the folder refined a KACS model (a refined run records the evolved
    model's error beside the refined one's)."""
    return "evolved_test_mae" in frame and bool(frame["evolved_test_mae"].notna().any())


# ---- structural fidelity: one row of docs/fidelity/grid.csv per (function, n, run, setting);
# each cell is the mean over the runs every setting of a table has there, which it lists.

def _grid(runs: Runs) -> pd.DataFrame:
    return pd.read_csv(runs.root / "docs" / "fidelity" / "grid.csv")


def _fidelity(runs: Runs, settings, mae) -> list[list[str]]:
    """Per (function, n) where every setting has a run: those runs, each setting's mean
    fidelity (the worst input's) and the test MAE of the settings in `mae`."""
    g = _grid(runs)
    here = g[g.setting.isin(settings)]
    counts = here.groupby(["function", "n"]).setting.nunique()
    rows = []
    for (function, n) in (cell for cell, k in counts.items() if k == len(settings)):
        sel = here[(here.function == function) & (here.n == n)]
        sel = sel[sel.run.isin(set.intersection(*(set(s.run) for _, s in sel.groupby("setting"))))]
        of = {s: sel[sel.setting == s] for s in settings}
        rows.append([function, str(n), ", ".join(str(r) for r in sorted(set(sel.run)))]
                    + [f"{of[s].fidelity_mean.mean():.3f} ({of[s].fidelity_worst.mean():.3f})" for s in settings]
                    + [f"{of[s].test_mae.mean():.3f}" for s in mae])
    return rows


def t_fidelity_kacs(runs: Runs) -> str:
    """KACS plain, refined and compacted: fidelity and test MAE per function and n."""
    settings = ("plain", "refined", "compacted")
    return table(["function", "n", "runs", "plain", "refined", "compacted", "test MAE plain", "refined", "compacted"],
                 _fidelity(runs, settings, settings), "lrl" + "r" * 6)


def t_fidelity_baselines(runs: Runs) -> str:
    """Refined KACS, EBM and the KAN: fidelity and test MAE per function and n, paired runs."""
    settings = ("refined", "ebm", "kan")
    return table(["function", "n", "runs", "refined KACS", "EBM", "KAN", "test MAE refined KACS", "EBM", "KAN"],
                 _fidelity(runs, settings, settings), "lrl" + "r" * 6)


def t_fidelity_levers(runs: Runs) -> str:
    """Refined KACS with each capacity lever at n = 10: fidelity (worst input) per function,
    test MAE of the default and of all three levers."""
    settings = ("refined", "refined-N25600", "refined-m-n+1", "refined-quantile", "refined-levers")
    return table(["function", "n", "runs", "refined", "N = 25,600", "m = n + 1", "quantile", "all three",
                  "test MAE refined", "all three"], _fidelity(runs, settings, ("refined", "refined-levers")),
                 "lrl" + "r" * 7)


# ---- bagging's members (tools/bag_choice.py) and the smoothness probe (tools/smoothness_probe.py)

BAG_VARIANTS = (("boot", "5 bags, bootstrap, each refined"), ("boot_merged_refined", "the same, merged model refined again"),
                ("half", "5 bags, half-samples, each refined"))


def _bag_choice(runs: Runs) -> pd.DataFrame:
    return pd.read_csv(runs.root / "results" / "bag_choice" / "bag_choice.csv")


def t_bag_choice(runs: Runs) -> str:
    rows = []
    for dataset, part in _bag_choice(runs).groupby("dataset", sort=False):
        row = [dataset, str(len(part)), f"{part['single'].mean():.4f}"]
        for column, _ in BAG_VARIANTS:
            row.append(f"{part[column].mean():.4f} ({int((part[column] < part['single']).sum())} of {len(part)})")
        rows.append(row + [f"{part['boot_seconds'].mean() / part['single_seconds'].mean():.1f}x"])
    return table(["dataset", "runs", "single model", *(label for _, label in BAG_VARIANTS), "time of 5 bags"], rows,
                 "lrrrrrr")


def v_bag_choice_below_boot(runs: Runs, column: str) -> str:
    """In how many runs of results/bag_choice the variant `column` had a lower test MAE than
    the bootstrap bags without it."""
    frame = _bag_choice(runs)
    return f"{int((frame[column] < frame['boot']).sum())} of {len(frame)}"


def _smoothness_probe(runs: Runs, name: str) -> pd.DataFrame:
    return pd.read_csv(runs.root / "results" / "smoothness_probe" / f"{name}.csv")


def t_smoothness_probe(runs: Runs) -> str:
    frame = _smoothness_probe(runs, "smoothness_probe")
    mus = sorted(frame.mu.unique())
    rows = []
    for dataset, part in frame.groupby("dataset", sort=False):
        wide = part.pivot(index="run", columns="mu", values="test_mae")
        rows.append([dataset, str(len(wide)), f"{wide[0.0].mean():.4f}"]
                    + [f"{wide[mu].mean():.4f} ({int((wide[mu] < wide[0.0]).sum())})" for mu in mus[1:]])
    return table(["dataset", "runs", "mu = 0", *(f"mu = {mu:g}" for mu in mus[1:])], rows, "lr" + "r" * len(mus))


def v_smoothness_seen_rows(runs: Runs, datasets: str) -> str:
    """In how many runs of the comma-separated datasets the strength judged on rows the evolution
    had seen (results/smoothness_probe/smoothness_search_seen_rows.csv) was 0."""
    frame = _smoothness_probe(runs, "smoothness_search_seen_rows")
    chosen = frame[frame.mu.isna() & frame.dataset.isin(datasets.split(","))].chosen
    return f"{int((chosen == 0).sum())} of {len(chosen)}"


def t_smoothness_search(runs: Runs) -> str:
    """The probe with `smoothness: search` beside the fixed strengths (tools/smoothness_probe.py
    --search): per dataset the mean test MAE without the penalty, at mu = 3, at the fixed
    strength best in the mean (a choice made on the test rows, so a bound, not a method), and
    with the strength searched per run (runs below mu = 0 in brackets), and the strengths chosen."""
    frame = _smoothness_probe(runs, "smoothness_search")
    fixed, searched = frame[frame.mu.notna()], frame[frame.mu.isna()].set_index("run")
    rows = []
    for dataset, part in fixed.groupby("dataset", sort=False):
        wide = part.pivot(index="run", columns="mu", values="test_mae")
        means = wide.mean()
        best = means.idxmin()
        search = searched[searched.dataset == dataset]
        below = int((search.test_mae < wide[0.0].reindex(search.index)).sum())
        chosen = search.chosen.value_counts().sort_index()
        rows.append([dataset, str(len(wide)), f"{means[0.0]:.4f}", f"{means[3.0]:.4f}",
                     f"{means[best]:.4f} (mu = {best:g})", f"{search.test_mae.mean():.4f} ({below})",
                     ", ".join(f"{mu:g}: {count}" for mu, count in chosen.items())])
    return table(["dataset", "runs", "mu = 0", "mu = 3", "best fixed mu", "searched", "strengths chosen (runs)"], rows,
                 "lrrrrrl")
