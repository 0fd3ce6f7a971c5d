"""The campaign runner with the real engine on tiny problems: determinism, resume, refusal,
selection. The Dask backend is tested through `kacs run` in test_run_cli.py."""

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from kacs_cli.cli.campaign import ConsoleReporter
from kacs_cli.engine.train import CURVE_COLUMNS
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.execution import load_cell_data
from kacs_cli.experiments.campaign.results import RUN_COLUMNS, ResolvedConfig
from kacs_cli.experiments.campaign.runner import run_campaign
from kacs_cli.experiments.campaign.tasks import expand_tasks

TINY = {
    "experiment": "tiny",
    "hyperparameters": {"N": 300},
    "benchmarks": [{"name": "f3", "n": 3, "samples": 200}, {"name": "f1", "n": 2, "samples": 150}],
    "protocol": {"name": "main", "runs": 3},
    "iterations": 1000,
    "eval_every": 500,
}
NUMBERS = [c for c in RUN_COLUMNS if c != "seconds"]


def tiny_config(**changes):
    raw = json.loads(json.dumps(TINY))
    raw.update(changes)
    return resolve_config(raw)


def campaign(config, out, **kw):
    """run_campaign with its console captured; returns (result, printed text)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=200)
    result = run_campaign(config, out, reporter=ConsoleReporter(console, progress=False), **kw)
    return result, buffer.getvalue()


def numbers(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "runs.csv")[NUMBERS]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One uninterrupted single-process campaign of TINY, shared read-only by the tests."""
    out = tmp_path_factory.mktemp("reference") / "tiny"
    result, _ = campaign(tiny_config(), out, jobs=1)
    assert result.ran == 12
    return out


def test_results_layout(reference):
    runs = pd.read_csv(reference / "runs.csv", keep_default_na=False)
    assert tuple(runs.columns) == RUN_COLUMNS
    # Sorted by cell order, method order, run; one row per (cell, method, run).
    expected = [(b, m, r) for b in ("f3", "f1") for m in ("xcsf", "kacs") for r in range(3)]
    assert list(zip(runs["benchmark"], runs["method"], runs["run"])) == expected
    assert set(runs["experiment"]) == {"tiny"} and set(runs["variant"]) == {""}
    assert list(runs["n"][runs["benchmark"] == "f3"].unique()) == [3]
    assert list(runs["samples"][runs["benchmark"] == "f1"].unique()) == [150]
    assert set(runs["N"]) == {300} and set(runs["iterations"]) == {1000}
    # Main protocol: run r has split seed r and learner seed r, the same for both methods.
    assert (runs["split_seed"] == runs["run"]).all() and (runs["seed"] == runs["run"]).all()
    assert runs.loc[runs.method == "xcsf", "cover_rate_inner"].eq("").all()
    assert (runs.loc[runs.method == "kacs", "cover_rate_inner"].astype(float) >= 0).all()
    for b, m, r in expected:
        key = f"{b}__{m}__{r}"
        curve = pd.read_csv(reference / "curves" / f"{key}.csv")
        assert tuple(curve.columns) == CURVE_COLUMNS and list(curve["iteration"]) == [500, 1000]
        row = runs[(runs.benchmark == b) & (runs.method == m) & (runs.run == r)].iloc[0]
        assert curve["test_mae"].iloc[-1] == pytest.approx(float(row["test_mae"]), rel=1e-12)
        population = pd.read_csv(reference / "populations" / f"{key}.csv")
        assert len(population) == row["rules"] and population["num"].sum() == row["micro"]
        assert (reference / "runs" / f"{key}.json").is_file()
    assert not list(reference.rglob("*.tmp"))
    config = (reference / "config.yaml").read_text()
    assert "theta_GA: 50.0" in config and "label: f3" in config


@pytest.mark.slow
def test_jobs_do_not_change_the_numbers(reference, tmp_path):
    result, _ = campaign(tiny_config(), tmp_path / "two", jobs=2)
    assert result.ran == 12
    pd.testing.assert_frame_equal(numbers(tmp_path / "two"), numbers(reference), check_exact=True)
    for curve in (reference / "curves").glob("*.csv"):
        assert (tmp_path / "two" / "curves" / curve.name).read_bytes() == curve.read_bytes()


def test_second_run_does_nothing_and_resume_redoes_only_what_is_missing(reference, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(reference, out)
    result, text = campaign(tiny_config(), out, jobs=1)
    assert result.ran == 0 and result.already == 12
    assert "Nothing to do" in " ".join(text.split())

    # A lost record, a record whose curve is gone, a truncated record and a stale temp file:
    # exactly those three runs are done again, with the same numbers.
    (out / "runs" / "f3__kacs__1.json").unlink()
    (out / "curves" / "f1__xcsf__0.csv").unlink()
    (out / "runs" / "f1__kacs__2.json").write_text('{"experiment": "ti')
    (out / "runs" / ".f3__xcsf__0.json.999.tmp").write_text("{")
    (out / "runs.csv").unlink()
    result, _ = campaign(tiny_config(), out, jobs=1)
    assert (result.ran, result.already) == (3, 9)
    pd.testing.assert_frame_equal(numbers(out), numbers(reference), check_exact=True)
    assert not list(out.rglob("*.tmp"))


def test_a_folder_shipped_with_runs_csv_alone_is_complete(reference, tmp_path):
    """results/paper/ is committed without run records, curves or populations: resuming
    there must neither redo the runs nor rewrite runs.csv from nothing."""
    out = tmp_path / "shipped"
    shutil.copytree(reference, out)
    for folder in ("runs", "curves", "populations"):
        shutil.rmtree(out / folder)
    before = (out / "runs.csv").read_bytes()
    result, text = campaign(tiny_config(), out, jobs=1)
    assert (result.ran, result.already) == (0, 12)
    assert "Nothing to do" in " ".join(text.split())
    assert (out / "runs.csv").read_bytes() == before


def test_a_different_config_is_refused_unless_force(reference, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(reference, out)
    (out / "notes.txt").write_text("mine")
    changed = tiny_config(iterations=600)
    with pytest.raises(UserError, match=r"different config \(differs in: iterations\).*--force.*--out"):
        campaign(changed, out, jobs=1)
    retuned = tiny_config(methods={"xcsf": None, "kacs": {"chi": 0.5}})
    with pytest.raises(UserError, match=r"differs in: benchmarks \(changed f3, f1\)"):
        campaign(retuned, out, jobs=1)
    assert pd.read_csv(out / "runs.csv")["iterations"].eq(1000).all()  # untouched

    result, _ = campaign(changed, out, jobs=1, force=True)
    assert (result.ran, result.already) == (12, 0)
    assert pd.read_csv(out / "runs.csv")["iterations"].eq(600).all()
    assert "iterations: 600" in (out / "config.yaml").read_text()
    assert (out / "notes.txt").read_text() == "mine"  # --force removes only the runner's files


def test_the_resolved_config_reads_back_what_kacs_run_writes_and_hand_written_forms():
    config = tiny_config()
    resolved = ResolvedConfig.parse(config.to_yaml())
    assert (resolved.experiment, resolved.protocol, resolved.runs, resolved.iterations) == ("tiny", "main", 3, 1000)
    assert [c.label for c in resolved.cells] == [c.label for c in config.cells]
    assert resolved.methods == tuple(config.methods) and resolved.without_runs()["protocol"].get("runs") is None
    hand = ResolvedConfig.parse("experiment: e\nprotocol: Alternative\nmethods: XCSF, kacs\nbenchmarks: [f1]\n")
    assert (hand.protocol, hand.runs, hand.methods, hand.cells, hand.benchmarks) == (
        "alternative", None, ("xcsf", "kacs"), None, ("f1",))


def test_a_config_yaml_without_settings_is_one_line_for_the_runner_and_the_report(tmp_path):
    from kacs_cli.reporting.build import build_report

    out = tmp_path / "tiny"
    out.mkdir()
    (out / "config.yaml").write_text("- a list\n- not settings\n")
    with pytest.raises(UserError) as info:
        campaign(tiny_config(), out)
    assert "config.yaml is unreadable" in str(info.value) and "\n" not in str(info.value)
    (out / "runs.csv").write_text(",".join(RUN_COLUMNS) + "\n")
    with pytest.raises(UserError) as info:
        build_report(out, figures=False)
    assert "holds no settings" in str(info.value) and "\n" not in str(info.value)


def test_selection_runs_part_now_and_the_rest_later(reference, tmp_path):
    out = tmp_path / "part"
    result, _ = campaign(tiny_config(), out, jobs=1, benchmarks=["f1"], methods=["kacs"])
    assert (result.total, result.ran) == (3, 3)
    runs = pd.read_csv(out / "runs.csv")
    assert set(zip(runs.benchmark, runs.method)) == {("f1", "kacs")}
    result, _ = campaign(tiny_config(), out, jobs=2)  # the same config: completes it
    assert (result.total, result.already, result.ran) == (12, 3, 9)
    pd.testing.assert_frame_equal(numbers(out), numbers(reference), check_exact=True)
    with pytest.raises(UserError, match="--benchmarks: 'f2' is not in experiment tiny"):
        campaign(tiny_config(), out, benchmarks=["f2"])
    with pytest.raises(UserError, match="--methods: 'xcs'"):
        campaign(tiny_config(), out, methods=["xcs"])


def test_missing_data_stops_before_anything_runs(tmp_path, shared_data_dir):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(shared_data_dir / "asn.csv", data / "asn.csv")
    config = tiny_config(benchmarks=[{"name": "f2", "source": "published"}, "asn", "cs"],
                         iterations=300, protocol={"runs": 1})
    out = tmp_path / "out"
    with pytest.raises(UserError) as info:
        campaign(config, out, jobs=1, data_dir=data)
    message = str(info.value)
    assert "missing dataset(s) f2, cs" in message and str(data) in message
    assert "kacs data fetch" in message and "kacs data import DIR" in message and "--skip-missing" in message
    assert not out.exists()

    result, text = campaign(config, out, jobs=1, data_dir=data, skip_missing=True)
    assert result.skipped == ["f2", "cs"] and result.ran == 2
    assert set(pd.read_csv(out / "runs.csv")["benchmark"]) == {"asn"}
    assert "skipping f2, cs" in text


def test_a_finished_folder_needs_no_data_but_new_runs_do(tmp_path, shared_data_dir):
    """Committed results on a fresh clone: resuming a complete campaign rebuilds runs.csv
    without the datasets; only runs still to do need them."""
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(shared_data_dir / "asn.csv", data / "asn.csv")
    config = tiny_config(benchmarks=["asn"], iterations=300, protocol={"runs": 1})
    out = tmp_path / "out"
    assert campaign(config, out, jobs=1, data_dir=data)[0].ran == 2
    before = (out / "runs.csv").read_bytes()
    shutil.rmtree(data)
    data.mkdir()
    for sub in ("runs", "curves", "populations"):  # as a clone has it: runs.csv rows only
        shutil.rmtree(out / sub)
    result, text = campaign(config, out, jobs=1, data_dir=data)
    assert (result.ran, result.already) == (0, 2) and "Nothing to do" in text
    assert (out / "runs.csv").read_bytes() == before
    with pytest.raises(UserError, match="missing dataset\\(s\\) asn"):
        campaign(tiny_config(benchmarks=["asn"], iterations=300, protocol={"runs": 2}), out, jobs=1,
                 data_dir=data)


def test_bad_backend_and_jobs_are_refused(tmp_path):
    with pytest.raises(UserError, match="--backend must be one of local, dask"):
        campaign(tiny_config(), tmp_path / "x", backend="spark")
    with pytest.raises(UserError, match="--jobs must be a whole number >= 1"):
        campaign(tiny_config(), tmp_path / "x", jobs=0)


def test_tasks_pair_the_methods_and_data_loads_once():
    config = tiny_config(protocol={"name": "alternative", "runs": 10})
    tasks = expand_tasks(config)
    assert len(tasks) == 2 * 2 * 10
    by_run = {}
    for t in tasks:
        by_run.setdefault((t.cell.label, t.run), set()).add((t.split_seed, t.seed))
    assert all(len(v) == 1 for v in by_run.values())  # XCSF and KACS share split and seed
    assert [(t.run, t.split_seed, t.seed) for t in tasks[:10]] == [(r, r // 8, r % 8) for r in range(10)]
    cell = config.cells[0]
    X, y = load_cell_data(cell)
    assert load_cell_data(cell)[0] is X and X.shape == (200, 3)


def test_a_folder_in_use_by_another_campaign_is_refused(reference, tmp_path):
    fcntl = pytest.importorskip("fcntl")
    out = tmp_path / "busy"
    shutil.copytree(reference, out)
    with open(out / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(UserError, match="another `kacs run` is writing to"):
            campaign(tiny_config(), out, jobs=1)
    result, _ = campaign(tiny_config(), out, jobs=1)  # released: usable again
    assert result.ran == 0


def test_a_runs_csv_written_before_final_n_is_complete_and_gains_the_column(reference, tmp_path):
    """A runs.csv without the final_N column (results/paper/'s, of fixed budgets) holds
    finished runs all the same, with final_N = N."""
    out = tmp_path / "old"
    shutil.copytree(reference, out)
    for folder in ("runs", "curves", "populations"):
        shutil.rmtree(out / folder)
    old = pd.read_csv(out / "runs.csv").drop(columns=["final_N"])
    old.to_csv(out / "runs.csv", index=False)
    result, _ = campaign(tiny_config(), out, jobs=1)
    assert (result.ran, result.already) == (0, 12)
    runs = pd.read_csv(out / "runs.csv")
    assert tuple(runs.columns) == RUN_COLUMNS and (runs["final_N"] == runs["N"]).all()
    pd.testing.assert_frame_equal(runs.drop(columns=["final_N"]), old, check_exact=True)


def test_method_variants_run_their_learner_under_their_label(reference, tmp_path):
    """Two KACS variants in one config: the fixed one reproduces the plain KACS runs, the
    adaptive one (starved at N = 30 for 28 submodels) ends with a larger final_N; a benchmark
    entry's `methods` restricts what runs on that cell."""
    config = tiny_config(
        hyperparameters={},
        methods={"kacs": {"N": 300}, "kacs-adaptive": {"method": "kacs", "N": 30, "budget": "adaptive",
                                                       "budget_window": 100}},
        benchmarks=[{"name": "f3", "n": 3, "samples": 200},
                    {"name": "f1", "n": 2, "samples": 150, "methods": ["kacs"]}],
    )
    out = tmp_path / "variants"
    result, _ = campaign(config, out, jobs=1)
    assert result.ran == 3 * 2 + 3
    runs = pd.read_csv(out / "runs.csv")
    assert list(dict.fromkeys(zip(runs.benchmark, runs.method))) == [
        ("f3", "kacs"), ("f3", "kacs-adaptive"), ("f1", "kacs")]
    mine = runs[runs.method == "kacs"].reset_index(drop=True)[NUMBERS]
    theirs = numbers(reference)
    theirs = theirs[theirs.method == "kacs"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, theirs, check_exact=True)
    adaptive = runs[runs.method == "kacs-adaptive"]
    assert (adaptive["N"] == 30).all() and (adaptive["final_N"] > 30).all()
    assert (adaptive["final_N"] <= 25600).all() and (adaptive["micro"] <= adaptive["final_N"]).all()
    resolved = (out / "config.yaml").read_text()
    assert "method_engines:" in resolved and "budget: adaptive" in resolved
    result, _ = campaign(config, out, jobs=1)  # resumes: all done
    assert result.ran == 0
