"""`kacs report` over the article's experiments: discovery at any depth, the index, included
cells and the SupRB table, figures that cannot be drawn, the published-setting warning, and
re-rendering as a no-op (byte for byte; committed PNGs by name, see below)."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.figure
import pandas as pd
import pytest
import yaml

from kacs_cli.reporting import figures as figs
from kacs_cli.reporting.build import build_report
from kacs_cli.reporting.loading import load_runs

from test_report import _row, paper_rows, run_row, write_curves, write_experiment
from repo_support import REPO



def _kacs(capsys, *args: str) -> tuple[int, str, str]:
    from kacs_cli.cli import main

    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def _plain_rows(name: str, cells: list[str], runs: int, **metrics) -> list[dict]:
    return [run_row(name, c, m, r, test_mae=0.2, train_mae=0.1, rules=1, params=1, aic=1, **metrics)
            for c in cells for m in ("xcsf", "kacs") for r in range(runs)]


# ----------------------------------------------------------------------------- discovery


def test_report_finds_experiments_at_any_depth_and_names_what_it_skipped(tmp_path, capsys) -> None:
    results = tmp_path / "results"
    write_experiment(results / "paper" / "main", "main", _plain_rows("main", ["f1"], 2), [{"name": "f1"}], runs=2)
    write_experiment(results / "smoke", "smoke", _plain_rows("smoke", ["f2"], 2), [{"name": "f2"}], runs=2)
    write_experiment(results / "main", "main", _plain_rows("main", ["f3"], 2), [{"name": "f3"}], runs=2)
    (results / "old" / "notes" / "deeper").mkdir(parents=True)
    (results / "paper" / "drafts").mkdir()
    code, out, err = _kacs(capsys, "report", str(results), "--no-figures", "--format", "md")
    assert code == 0, err
    md = (results / "report" / "report.md").read_text()
    # both experiments, each in its own section, with one index at the top (article order)
    # two experiments named main, in folders named main: told apart by their path below results/
    assert "## main-main\n" in md and "## main-paper-main\n" in md and "## smoke\n" in md
    contents = md.split("## Contents")[1].split("\n## ")[0]
    assert contents.index("[main-main](#main-main)") < contents.index("[smoke](#smoke)")
    skipped = [f"{results / 'old'}: no runs.csv at any depth", f"{results / 'paper' / 'drafts'}: no runs.csv at any depth"]
    for line in skipped:
        assert f"- {line}" in contents
        assert f"  - {line}" in out
    assert "deeper" not in md  # a skipped folder is named once, at its top
    assert "skipped (no experiment inside):" in out


def test_a_single_experiment_has_no_index(tmp_path) -> None:
    exp = write_experiment(tmp_path / "main", "main", _plain_rows("main", ["f1"], 2), [{"name": "f1"}], runs=2)
    build_report(exp, formats="md", figures=False)
    assert "## Contents" not in (exp / "report" / "report.md").read_text()


# ----------------------------------------------------------------------------- SupRB


def _alt_rows(name: str, cell: str, runs: int, xcsf_mse: float, kacs_mse: float, n: int, N: int = 6400) -> list[dict]:
    rows = []
    for r in range(runs):
        for method, mse, rules in (("xcsf", xcsf_mse, 900), ("kacs", kacs_mse, 1000)):
            rows.append(run_row(name, cell, method, r, n=n, N=N, train_mse=mse, test_mse=mse + 0.01 * r,
                                rules=rules + 10 * r, params=2 * rules, aic=1.0))
    return rows


def test_suprb_report_takes_the_shared_cells_from_alt_protocol(tmp_path) -> None:
    paper = tmp_path / "paper"
    alt_rows = _alt_rows("alt_protocol", "asn", 4, 0.30, 0.20, 5) + _alt_rows("alt_protocol", "f1", 4, 0.5, 0.4, 10)
    write_experiment(paper / "alt_protocol", "alt_protocol", alt_rows, [{"name": "asn"}, {"name": "f1"}],
                     runs=4, protocol="alternative")
    suprb_rows = _alt_rows("suprb", "pppts", 4, 0.70, 0.72, 9) + _alt_rows("suprb", "pt", 4, 0.40, 0.50, 18, N=15984)
    exp = write_experiment(paper / "suprb", "suprb", suprb_rows, [{"name": "pppts"}, {"name": "pt", "N": 15984}],
                           runs=4, protocol="alternative")
    config = yaml.safe_load((exp / "config.yaml").read_text())
    config["report"] = {"include": [{"experiment": "alt_protocol", "benchmarks": ["asn", "ccpp"]}]}
    (exp / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))

    summary = build_report(exp, formats=("md", "csv"), figures=False)
    e = summary.experiments[0]
    assert [c.label for c in e.cells] == ["asn", "pppts", "pt"]  # f1 of alt_protocol not included
    assert e.missing == ["included experiment alt_protocol has no cell ccpp"]
    md = (exp / "report" / "report.md").read_text()
    assert f"asn from `{(exp.parent / 'alt_protocol').as_posix()}`" in md
    table = md.split("### suprb: comparison with SupRB")[1].split("###")[0]
    assert "descriptive only, no test, no ranks" in table
    header = _row(table, "dataset")
    assert header[:7] == ["dataset", "N", "XCSF (ours): test MSE", "rules", "KACS (ours): test MSE", "rules", "runs"]
    # asn: test MSE 0.30 + 0.01 r over r = 0..3 -> mean 0.315, SD sqrt(0.0005/3) = 0.01291;
    # rules 900 + 10 r -> 915 ± 12.91; literature verbatim from docs/algorithm.md section 10
    assert _row(table, "ASN") == ["ASN", "6400", "0.3150 ± 0.0129", "915 ± 12.91", "0.2150 ± 0.0129",
                                  "1015 ± 12.91", "4", "0.12 ± 0.16", "1617.58 ± 413.12", "0.15 ± 0.02", "43.3 ± 2.8"]
    assert _row(table, "PT")[:2] == ["PT", "15984"] and _row(table, "PT")[7:] == ["n/a", "n/a", "0.31 ± 0.03", "38.8 ± 3.3"]
    assert "**" not in table and " ~" not in table and "+" not in table  # no bold, no symbols
    csv = pd.read_csv(exp / "report" / "suprb_suprb.csv")
    assert list(csv["benchmark"]) == ["asn", "pppts", "pt"]
    assert csv.loc[0, "xcsf_test_mse_mean"] == pytest.approx(0.315)
    assert math.isnan(csv.loc[2, "xcsf_compacted_mse_mean"]) and csv.loc[2, "suprb_rules_mean"] == 38.8
    # the summary's across-cell statistics cover the included cell too
    assert e.across.set_index("metric").loc["test_mse", "n_benchmarks"] == 3


def test_an_experiment_of_variants_alone_gets_no_suprb_table(tmp_path) -> None:
    # Compacted KACS on PPPTS (results/compaction_suprb): neither XCSF nor KACS ran, so the
    # SupRB table (our XCSF and KACS beside the literature) would be a table of n/a.
    rows = [{**row, "method": f"{row['method']}-compacted"} for row in _alt_rows("c", "pppts", 2, 0.7, 0.72, 9)]
    exp = write_experiment(tmp_path / "c", "c", rows, [{"name": "pppts"}], runs=2, protocol="alternative")
    build_report(exp, formats=("md",), figures=False)
    md = (exp / "report" / "report.md").read_text()
    assert "comparison with SupRB" not in md and "kacs-compacted" in md


def test_missing_or_different_included_experiment_is_said(tmp_path) -> None:
    paper = tmp_path / "paper"
    exp = write_experiment(paper / "suprb", "suprb", _alt_rows("suprb", "pt", 2, 0.4, 0.5, 18),
                           [{"name": "pt"}], runs=2, protocol="alternative")
    config = yaml.safe_load((exp / "config.yaml").read_text())
    config["report"] = {"include": {"experiment": "alt_protocol", "benchmarks": ["asn"]}}
    (exp / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    e = build_report(exp, formats="md", figures=False).experiments[0]
    assert e.missing[0].startswith("included experiment alt_protocol (asn): no results folder of it beside")
    # found under another folder name, but run with other iterations
    other = write_experiment(paper / "alt_run2", "alt_protocol", _alt_rows("alt_protocol", "asn", 2, 0.3, 0.2, 5),
                             [{"name": "asn"}], runs=2, protocol="alternative")
    config_other = yaml.safe_load((other / "config.yaml").read_text())
    config_other["iterations"] = 100000
    (other / "config.yaml").write_text(yaml.safe_dump(config_other, sort_keys=False))
    e = build_report(exp, formats="md", figures=False).experiments[0]
    assert [c.label for c in e.cells] == ["asn", "pt"] and e.missing == []
    assert e.notes == ["the cells included from alt_protocol were run with other settings than this experiment "
                       "(differs in: iterations): they are not the same experiment"]


# ----------------------------------------------------------------------------- figures


def test_single_evaluation_point_gets_markers_and_distinct_ticks(tmp_path, monkeypatch) -> None:
    """One evaluation per run (--iterations 2000): a line through one point is invisible and
    an axis a few iterations wide repeats its '2k' labels."""
    frames = [pd.DataFrame({"iteration": [2000], "test_mae": [0.3 + 0.01 * r], "run": [r]}) for r in range(3)]
    curves = {"f1": {"xcsf": frames, "kacs": [f.assign(test_mae=f["test_mae"] - 0.1) for f in frames]}}
    captured = {}

    def keep(fig, path):
        captured["fig"] = fig
        return path

    monkeypatch.setattr(figs, "_save", keep)
    figs.curve_figure(curves, [("f1", "f1")], "test_mae", "test MAE", "t", tmp_path / "x.png")
    fig = captured["fig"]
    fig.canvas.draw()
    ax = fig.axes[0]
    drawn = [line for line in ax.get_lines() if not line.get_label().startswith("_")]  # not the bars' caps
    assert len(drawn) == 2 and all(line.get_marker() not in (None, "None", "", " ") for line in drawn)
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels == ["0", "2k"]
    assert ax.get_xlim()[0] == 0 and ax.get_xlim()[1] > 2000


def test_a_figure_that_cannot_be_drawn_says_why(tmp_path) -> None:
    exp = write_experiment(tmp_path / "main", "main", _plain_rows("main", ["f1"], 2), [{"name": "f1"}], runs=2)
    stale = exp / "report" / "figures" / "main_test_error.png"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an old figure")
    summary = build_report(exp, formats="md")
    md = (exp / "report" / "report.md").read_text()
    figures = md.split("### Figures")[1]
    assert "Learning and covering-rate curves: not drawn" in figures and "no curve data" in figures
    assert "![" not in figures
    assert not stale.exists()  # no figure of an earlier render stays behind looking current
    assert summary.experiments[0].figures == []


def test_a_table_an_earlier_render_wrote_does_not_stay_behind(tmp_path) -> None:
    """A report's optional tables (the published comparison, SupRB, refinement, compaction,
    ...) are removed when a render no longer has them; the tables it writes stay, and another
    experiment's files in the same folder are left alone."""
    exp = write_experiment(tmp_path / "main", "main", _plain_rows("main", ["f1"], 2), [{"name": "f1"}], runs=2)
    report = exp / "report"
    report.mkdir()
    stale = [report / f"main_{kind}.csv" for kind in ("paper", "suprb", "refinement", "compaction", "pareto")]
    other = report / "other_suprb.csv"
    for path in (*stale, other):
        path.write_text("an old table\n")
    build_report(exp, formats="csv", figures=False)
    assert not [p.name for p in stale if p.exists()]
    assert other.read_text() == "an old table\n"
    assert (report / "main_summary.csv").is_file() and (report / "main_across.csv").is_file()
    # with --paper the published comparison is this render's again
    build_report(exp, formats="csv", figures=False, paper=True)
    assert (report / "main_paper.csv").is_file() and (report / "main_paper.csv").read_text() != "an old table\n"


def test_curve_figures_cover_train_and_test_error_params_and_covering(tmp_path) -> None:
    exp = write_experiment(tmp_path / "main", "main", _plain_rows("main", ["f1"], 2), [{"name": "f1"}], runs=2)
    for method in ("xcsf", "kacs"):
        write_curves(exp, "f1", method, runs=2, offset=0.1)
    summary = build_report(exp, formats="md")
    names = [p.name for p in summary.experiments[0].figures]
    assert names == ["main_train_error.png", "main_test_error.png", "main_params.png", "main_covering.png"]


# ----------------------------------------------------------------------------- --paper


@pytest.mark.slow
def test_paper_comparison_warns_when_the_campaign_is_not_the_published_setting(tmp_path, capsys) -> None:
    benches = ["f1", "f2", "f3", "f4", "asn", "ccpp", "cs", "eec"]
    exp = write_experiment(tmp_path / "main", "main", paper_rows(), [{"name": b} for b in benches], runs=4)
    code, out, err = _kacs(capsys, "report", str(exp), "--paper", "--no-figures", "--format", "md")
    assert code == 0, err
    warning = ("Warning: this campaign differs from the published setting (6,000 iterations per run instead of "
               "100,000; 4 runs per cell instead of 30): the comparison with the published table is not like for like.")
    assert warning in out and warning in (exp / "report" / "report.md").read_text()
    # the published setting itself: no warning
    runs = pd.read_csv(exp / "runs.csv")
    runs["iterations"] = 100000
    runs.to_csv(exp / "runs.csv", index=False)
    config = yaml.safe_load((exp / "config.yaml").read_text())
    config["protocol"]["runs"], config["iterations"] = 30, 100000
    (exp / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    code, out, _ = _kacs(capsys, "report", str(exp), "--paper", "--no-figures", "--format", "md")
    assert code == 0 and "Warning" not in out and "Warning" not in (exp / "report" / "report.md").read_text()
    # without --paper there is nothing to warn about
    code, out, _ = _kacs(capsys, "report", str(exp), "--no-figures", "--format", "md")
    assert "Warning" not in out


# ----------------------------------------------------------------------------- re-rendering


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_rerendering_after_a_clone_is_a_no_op(tmp_path, monkeypatch) -> None:
    """A campaign with its per-run curves renders; the committed form (runs.csv, config.yaml,
    curves.csv.gz and report/, as .gitignore keeps it) renders again to the same bytes."""
    import json

    from kacs_cli.experiments.campaign.config import resolve_config
    from kacs_cli.experiments.campaign.runner import run_campaign

    raw = {"experiment": "tiny", "hyperparameters": {"N": 200},
           "benchmarks": [{"name": "f3", "n": 2, "samples": 100}, {"name": "f3", "n": 3, "samples": 100}],
           "protocol": {"name": "main", "runs": 3}, "iterations": 600, "eval_every": 200}
    monkeypatch.chdir(tmp_path)
    run_campaign(resolve_config(json.loads(json.dumps(raw))), Path("results/tiny"), jobs=1)
    build_report("results/tiny", paper=True)
    first = _tree(tmp_path / "results" / "tiny" / "report")
    assert any(name.endswith("_scaling.png") for name in first) and any(name.endswith("_covering.png") for name in first)
    for sub in ("curves", "runs", "populations"):
        shutil.rmtree(tmp_path / "results" / "tiny" / sub)
    build_report("results/tiny", paper=True)
    assert _tree(tmp_path / "results" / "tiny" / "report") == first


# Every committed report, rendered again as `make paper-tables` renders it: the article's
# experiments (results/paper/<experiment>, and results/main_article, the main experiment under
# the article's prose) with --paper, the report over all of results/paper with --paper
# --no-figures, every other folder plainly.
RESULTS = REPO / "results"


def _committed_reports() -> list[Path]:
    """Every folder under results/ with a committed report."""
    return sorted(p.parent.parent for p in RESULTS.rglob("report/report.md"))


def _paper_tables_flags(folder: Path) -> dict[str, bool]:
    """build_report's flags for a folder, as the Makefile's paper-tables target passes them."""
    relative = folder.relative_to(RESULTS).as_posix()
    if relative == "paper":
        return {"paper": True, "figures": False}
    reproduced = relative.startswith("reproduce_") and relative.endswith("/main")
    return {"paper": relative.startswith("paper/") or relative == "main_article" or reproduced,
            "figures": True}


def _makefile() -> str:
    return (REPO / "Makefile").read_text(encoding="utf-8")


def make_variable(name: str, directory: Path = REPO) -> str:
    """A variable of the Makefile as make computes it with `directory` as the checkout."""
    done = subprocess.run(["make", "-s", "--no-print-directory", "-f", str(directory / "Makefile"),
                           "--eval", f"print-variable: ; @echo $({name})", "print-variable"],
                          cwd=directory, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_makefile_finds_the_folders_beyond_the_article_on_disk(tmp_path) -> None:
    """A new campaign's folder is rendered by `make paper-tables` once it has a report: no list
    to extend; the article's folders (results/paper, results/main_article) are not among them."""
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    for folder in ("paper", "paper/main", "main_article", "adaptive", "budget/100k", "new_campaign",
                   "not_reported", "reproduce_sorted/main"):
        (tmp_path / "results" / folder / "report").mkdir(parents=True)
        if folder != "not_reported":
            (tmp_path / "results" / folder / "report" / "report.md").write_text("# report\n")
    (tmp_path / "results" / "reproduce_sorted" / "main" / "runs.csv").write_text("run\n")
    assert make_variable("BEYOND", tmp_path).split() == [
        "results/adaptive", "results/budget/100k", "results/new_campaign"]
    assert make_variable("REPRODUCED", tmp_path).split() == ["results/reproduce_sorted/main"]


def test_make_paper_tables_renders_every_committed_report_with_these_flags() -> None:
    """A folder with a report that `make paper-tables` leaves out would go stale unseen, and
    the re-render check below must pass the flags the Makefile passes."""
    text = _makefile()
    recipe = re.search(r"^paper-tables:.*\n((?:\t.*\n)+)", text, re.M).group(1)
    beyond = make_variable("BEYOND").split()
    assert re.search(r"^PAPER := results/paper$", text, re.M)
    # each experiment of results/paper with --paper, then results/paper itself without figures,
    # then BEYOND plainly, then results/main_article with --paper
    assert 'for d in $(PAPER)/*/' in recipe and 'kacs report "$${d%/}" --paper ||' in recipe
    assert "kacs report $(PAPER) --paper --no-figures\n" in recipe
    assert 'for d in $(BEYOND)' in recipe and 'kacs report "$$d" ||' in recipe
    assert "kacs report results/main_article --paper ||" in recipe
    reproduced = make_variable("REPRODUCED").split()
    assert 'for d in $(REPRODUCED)' in recipe and 'kacs report "$$d" --paper ||' in recipe
    rendered = {"results/paper", "results/main_article", *beyond, *reproduced}
    rendered |= {f"results/paper/{p.name}" for p in (RESULTS / "paper").iterdir() if p.is_dir()}
    committed = {p.relative_to(REPO).as_posix() for p in _committed_reports()}
    assert committed <= rendered, f"not rendered by make paper-tables: {sorted(committed - rendered)}"
    assert not {f for f in beyond if f.startswith("results/paper")}
    flags = {folder: _paper_tables_flags(REPO / folder) for folder in committed}
    assert flags["results/paper"] == {"paper": True, "figures": False}
    assert all(flags[f] == {"paper": False, "figures": True} for f in committed & set(beyond))
    assert all(flags[f] == {"paper": True, "figures": True} for f in committed
               if f.startswith("results/paper/") or f == "results/main_article")


@pytest.fixture(scope="module")
def results_copy(tmp_path_factory) -> Path:
    """One copy of results/ as a fresh clone has it (no per-run files, no PNGs), shared by the
    re-render checks: a report may include cells of a sibling folder (suprb), and the report
    over results/paper links each experiment's own report."""
    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(RESULTS, root / "results",
                    ignore=shutil.ignore_patterns("curves", "runs", "populations", ".lock", "*.png"))
    return root


def _report_params() -> list:
    """One parameter per committed report."""
    return [pytest.param(folder, id=folder.relative_to(RESULTS).as_posix()) for folder in _committed_reports()]


@pytest.mark.slow
@pytest.mark.parametrize("exp", _report_params())
def test_committed_reports_rerender_to_the_same_bytes(exp: Path, results_copy: Path, monkeypatch) -> None:
    """What `make paper-tables` does on a fresh clone leaves every committed report as it is:
    the same files, and every table (Markdown, LaTeX, CSV) byte for byte."""
    relative = exp.relative_to(REPO)
    work = results_copy / relative
    shutil.rmtree(work / "report")
    monkeypatch.chdir(results_copy)
    # Only the figures' names are compared (below): each is drawn but written as an empty
    # file, which skips rasterizing, most of a report's time.
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda self, fname, *a, **k: Path(fname).write_bytes(b""))
    try:
        build_report(str(relative), **_paper_tables_flags(exp))
        committed, rendered = _tree(exp / "report"), _tree(work / "report")
    finally:
        # the other checks read this folder's report as committed (the results/paper index links it)
        shutil.rmtree(work / "report", ignore_errors=True)
        shutil.copytree(exp / "report", work / "report", ignore=shutil.ignore_patterns("*.png"))
    assert sorted(rendered) == sorted(committed), f"{relative}/report: the rendered files differ from the committed"
    # PNG pixels depend on the installed matplotlib and freetype, which a fresh install may
    # move; the tables are the contract, and the figures' names and presence are checked above.
    differ = [name for name in committed if not name.endswith(".png") and rendered[name] != committed[name]]
    assert not differ, f"{relative}/report: {', '.join(differ)} differ when re-rendered"


@pytest.mark.slow
def test_scaling_figure_draws_every_method_including_labelled_variants(tmp_path, monkeypatch) -> None:
    """An experiment with KACS variants (configs/adaptive.yaml): each variant is its own series
    of the scaling figure, after the XCSF/KACS pair, in the pair's colours for the pair."""
    import json

    from kacs_cli.experiments.campaign.config import resolve_config
    from kacs_cli.experiments.campaign.runner import run_campaign

    raw = {"experiment": "budgets",
           "methods": {"xcsf": None, "kacs": None, "kacs-big": {"method": "kacs", "N": 400}},
           "hyperparameters": {"N": 200},
           "benchmarks": [{"name": "f3", "n": 2, "samples": 100}, {"name": "f3", "n": 3, "samples": 100}],
           "protocol": {"name": "main", "runs": 2}, "iterations": 400, "eval_every": 200}
    monkeypatch.chdir(tmp_path)
    run_campaign(resolve_config(json.loads(json.dumps(raw))), Path("results/budgets"), jobs=1)
    captured = {}
    real_save = figs._save

    def keep(fig, path):
        if path.name.endswith("_scaling.png"):
            captured["fig"] = fig
        return real_save(fig, path)

    monkeypatch.setattr(figs, "_save", keep)
    build_report("results/budgets")
    ax = captured["fig"].axes[0]
    series = {c.get_label(): c for c in ax.containers}  # one errorbar container per series
    # kacs-big's runs (N = 400) belong to the cells of the pair (N = 200): a series of its own
    assert list(series) == ["XCSF (N=200)", "KACS (N=200)", "kacs-big"]
    colors = [c.lines[0].get_color() for c in series.values()]
    assert colors[:2] == ["tab:blue", "tab:red"] and colors[2] not in colors[:2]
    assert [len(c.lines[0].get_xdata()) for c in series.values()] == [2, 2, 2]  # n = 2 and 3


def test_variants_at_their_own_budget_and_methods_without_one_share_the_pairs_cell(tmp_path) -> None:
    """A variant with its own N and a method with no N (a baseline) belong to the pair's cell:
    one report cell per runner cell, no n/a rows for the pair beside them."""
    rows = []
    for method, N in (("xcsf", 200), ("kacs", 200), ("kacs-big", 400), ("ridge", None)):
        for run in (0, 1):
            rows.append({"benchmark": "f3-n2", "variant": "", "method": method, "run": run, "n": 2,
                         "samples": 100, "N": N, "test_mae": 0.1})
    # old results without cell labels: both methods at two budgets are two cells
    for N in (200, 400):
        for method in ("xcsf", "kacs"):
            rows.append({"benchmark": "f1", "variant": "", "method": method, "run": 0, "n": 2,
                         "samples": 100, "N": N, "test_mae": 0.1})
    pd.DataFrame(rows).to_csv(tmp_path / "runs.csv", index=False)
    runs = load_runs(tmp_path)
    assert set(runs.loc[runs["cell_id"] == "f3-n2", "N"]) == {200}
    assert set(runs.loc[runs["cell_id"] == "f1", "N"]) == {200, 400}
