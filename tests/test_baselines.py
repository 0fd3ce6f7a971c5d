"""Baselines beside kacs and xcsf (kacs_cli/baselines): parameter counts against hand-computed
values, one run's record against numpy on the same split, determinism, configs and their
one-line errors. xcsf-lib and kan run where their extras are installed."""

import importlib.util
import shutil
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from kacs_cli import baselines
from kacs_cli.engine.train import CURVE_COLUMNS, aic
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.execution import RunSettings, execute_task, load_cell_data
from kacs_cli.experiments.data.protocols import make_split
from kacs_cli.experiments.campaign.results import RUN_COLUMNS, _runs_csv_records, records_frame
from kacs_cli.experiments.campaign.runner import with_runs
from kacs_cli.experiments.campaign.tasks import expand_tasks

from cli_support import run_kacs
from repo_support import REPO, CONFIGS, project_config

TINY = {
    "experiment": "tiny",
    "methods": {"ridge": None, "rf-5": {"method": "rf", "n_estimators": 5, "max_depth": 3},
                "tree": {"estimator": "sklearn.tree.DecisionTreeRegressor", "params": {"max_depth": 2}}},
    "benchmarks": [{"name": "f1", "n": 3, "samples": 60}],
    "protocol": {"name": "main", "runs": 2},
}


def data(rows=40, n=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, n))
    return X, np.sin(3.0 * X[:, 0]) + X[:, 1] * X[:, -1] + 0.05 * rng.standard_normal(rows)


def fitted(name, overrides=None, rows=40, n=3, seed=0):
    X, y = data(rows, n)
    spec = baselines.resolve(name, overrides or {})
    return baselines.fit_predict(spec, seed, X, y, X[:5])


# --------------------------------------------------------------------------- parameter counts


@pytest.mark.parametrize("name,overrides,expected", [
    ("ridge", {}, 3 + 1),                                                  # n weights + intercept
    ("knn", {}, 40 * (3 + 1)),                                             # stored rows x (n + target)
    ("mlp", {"hidden_layer_sizes": [4], "max_iter": 20}, 3 * 4 + 4 + 4 * 1 + 1),
    # one split (feature, threshold) + two leaf values per tree
    ("estimator", {"estimator": "sklearn.tree.DecisionTreeRegressor", "max_depth": 1}, 2 + 2),
    ("rf", {"n_estimators": 3, "max_depth": 1}, 3 * (2 + 2)),
    ("gbr", {"max_iter": 2, "max_leaf_nodes": 2, "early_stopping": False}, 2 * (2 + 2) + 1),
    ("estimator", {"estimator": "sklearn.dummy.DummyRegressor"}, 1),
])
def test_parameter_counts_are_the_hand_computed_ones(name, overrides, expected):
    assert fitted(name, overrides).params == expected


def test_svr_counts_its_support_vectors_with_their_dual_coefficients():
    fit = fitted("svr")
    n_sv = len(fit.estimator.support_)
    assert 0 < n_sv <= 40 and fit.params == n_sv * (3 + 1) + 1


def test_an_estimator_of_unknown_kind_has_no_count():
    assert fitted("estimator", {"estimator": "sklearn.kernel_ridge.KernelRidge"}).params is None


# --------------------------------------------------------------------------- one run


def test_a_run_records_numpy_metrics_of_the_split_it_was_given():
    config = resolve_config(json.loads(json.dumps(TINY)))
    task = expand_tasks(config, methods=["ridge"])[1]
    settings = RunSettings("tiny", config.protocol, config.iterations, config.eval_every, None)
    out = execute_task(task, settings)
    X, y = load_cell_data(task.cell)
    split = make_split(X, y, config.protocol, task.split_seed)
    from sklearn.linear_model import Ridge

    model = Ridge().fit(split.X_train, split.y_train)
    e_train = split.y_train - model.predict(split.X_train)
    e_test = split.y_test - model.predict(split.X_test)
    r = out.record
    assert r["train_mae"] == pytest.approx(np.mean(np.abs(e_train)), rel=1e-12)
    assert r["test_mae"] == pytest.approx(np.mean(np.abs(e_test)), rel=1e-12)
    assert r["train_mse"] == pytest.approx(np.mean(e_train ** 2), rel=1e-12)
    assert r["test_mse"] == pytest.approx(np.mean(e_test ** 2), rel=1e-12)
    assert r["params"] == 4
    assert r["aic"] == pytest.approx(len(split.y_train) * np.log(np.mean(e_train ** 2)) + 2 * (4 + 1))
    assert r["aic"] == pytest.approx(float(aic(len(split.y_train), r["train_mse"], 4)))
    assert (r["run"], r["seed"], r["n"], r["samples"]) == (1, 1, 3, 60)
    assert all(r[k] is None for k in ("N", "iterations", "rules", "micro", "final_N"))
    assert all(np.isnan(r[k]) for k in ("cover_rate", "cover_rate_inner", "cover_rate_outer"))
    assert set(r) == set(RUN_COLUMNS) and r["seconds"] > 0
    assert list(out.curve.columns) == list(CURVE_COLUMNS) and out.curve.empty and out.population.empty


def test_same_seed_same_numbers_and_the_seed_reaches_the_estimator():
    a, b = fitted("rf", {"n_estimators": 4}, seed=3), fitted("rf", {"n_estimators": 4}, seed=3)
    c = fitted("rf", {"n_estimators": 4}, seed=4)
    assert a.estimator.random_state == 3 and a.estimator.n_jobs == 1
    assert np.array_equal(a.y_train, b.y_train) and np.array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.y_train, c.y_train)


@pytest.mark.slow
def test_campaign_numbers_do_not_depend_on_jobs_and_runs_csv_leaves_empty_fields(capsys, tmp_path):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(TINY, sort_keys=False))
    frames = []
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        code, _, err = run_kacs(capsys, "run", cfg, "--out", out, "--jobs", jobs)
        assert code == 0, err
        frames.append(pd.read_csv(out / "runs.csv").drop(columns="seconds"))
    pd.testing.assert_frame_equal(frames[0], frames[1])
    text = (tmp_path / "out1" / "runs.csv").read_text().splitlines()
    # ridge, run 0: N, iterations, rules, micro, cover rates and final_N are empty fields
    fields = dict(zip(text[0].split(","), text[1].split(",")))
    assert fields["method"] == "ridge" and fields["params"] == "4"
    assert all(fields[k] == "" for k in ("N", "iterations", "rules", "micro", "cover_rate", "final_N"))
    assert list(frames[0]["method"]) == ["ridge"] * 2 + ["rf-5"] * 2 + ["tree"] * 2
    # the resolved config spells out every parameter, so a changed one is another config
    resolved = yaml.safe_load((tmp_path / "out1" / "config.yaml").read_text())
    rf = resolved["cells"][0]["hyperparameters"]["rf-5"]
    assert rf["estimator"] == "sklearn.ensemble.RandomForestRegressor" and rf["seed_param"] == "random_state"
    assert rf["params"]["n_estimators"] == 5 and rf["params"]["n_jobs"] == 1 and "min_samples_leaf" in rf["params"]
    assert resolved["method_engines"] == {"rf-5": "rf", "tree": "estimator"}
    changed = json.loads(json.dumps(TINY))
    changed["methods"]["rf-5"]["max_depth"] = 4
    cfg.write_text(yaml.safe_dump(changed, sort_keys=False))
    code, _, err = run_kacs(capsys, "run", cfg, "--out", tmp_path / "out1")
    assert code == 2 and "different config" in err
    # the report keeps each baseline in its cell and shows its rules as n/a
    from kacs_cli.reporting.build import build_report

    build_report(tmp_path / "out1", figures=False)
    md = (tmp_path / "out1" / "report" / "report.md").read_text()
    assert "| f1   | ridge  |" in md and "n/a" in md


def test_committed_runs_csv_files_render_byte_identical():
    """Nullable integer columns write the committed results exactly as before."""
    for folder in sorted((REPO / "results" / "paper").glob("*/runs.csv")):
        config = project_config(folder.parent.name)
        runs = pd.read_csv(folder)
        config = with_runs(config, max(config.protocol.runs, int(runs["run"].max()) + 1))
        tasks = expand_tasks(config)
        records = _runs_csv_records(folder.parent, tasks, {})
        assert len(records) == len(runs), folder
        text = records_frame(records, [t.key for t in tasks]).to_csv(index=False)
        assert text == folder.read_text(), folder


# --------------------------------------------------------------------------- configs and errors


def _error(raw) -> str:
    with pytest.raises(UserError) as info:
        resolve_config(raw)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_config_errors_are_one_line_naming_the_fix():
    base = {"experiment": "e", "benchmarks": ["f1"]}
    msg = _error({**base, "methods": ["xcsf", "forest"]})
    assert "methods[1]" in msg and all(m in msg for m in ("kacs", "ridge", "rf", "gbr", "xcsf-lib", "kan"))
    msg = _error({**base, "methods": {"forest": None}})
    assert "unknown method" in msg and "estimator: module.Class" in msg
    msg = _error({**base, "methods": {"t": {"estimator": "sklearn.tree.NoSuchTree"}}})
    assert "methods.t" in msg and "sklearn.tree has no NoSuchTree" in msg
    msg = _error({**base, "methods": {"t": {"estimator": "no_such_package.Model"}}})
    assert "cannot import no_such_package" in msg
    msg = _error({**base, "methods": {"t": {"estimator": "sklearn.cluster.KMeans"}}})
    assert "not a scikit-learn regressor" in msg
    msg = _error({**base, "methods": {"t": {"estimator": "sklearn.preprocessing.StandardScaler"}}})
    assert "not a scikit-learn estimator" in msg
    msg = _error({**base, "methods": {"rf": {"n_trees": 5}}})
    assert "n_trees" in msg and "n_estimators" in msg
    msg = _error({**base, "methods": {"ridge": {"alpha": -1}}})
    assert "methods.ridge" in msg and "'alpha' parameter of Ridge" in msg
    msg = _error({**base, "methods": {"rf": {"random_state": 3}}})
    assert "set by the runner" in msg
    msg = _error({**base, "methods": {"r": {"method": "ridge", "estimator": "sklearn.linear_model.Lasso"}}})
    assert "without method" in msg
    msg = _error({**base, "methods": {"ridge": {"estimator": "sklearn.linear_model.Lasso"}}})
    assert "names a method" in msg
    msg = _error({**base, "methods": {"rf": {"method": "ridge"}}})
    assert "names a method" in msg


def test_a_missing_extra_exits_2_before_any_run_naming_the_pip_extra(capsys, tmp_path, monkeypatch):
    entry = baselines.get("kan")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in entry.modules else real(name, *a))
    cfg = tmp_path / "exp.yaml"
    cfg.write_text("benchmarks: [f1]\nmethods: [xcsf, kan]\n")
    code, _, err = run_kacs(capsys, "run", cfg, "--out", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1
    assert "method kan needs the optional extra: pip install 'kacs[kan]'" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_finished_folder_resumes_without_the_extras_of_its_methods(capsys, tmp_path, monkeypatch):
    """configs/baselines.yaml on a copy of its committed folder with neither extra installed:
    nothing to train, so nothing to import; a new run of kan still names the install."""
    modules = {m for name in ("xcsf-lib", "kan") for m in baselines.get(name).modules}
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in modules else real(name, *a))
    out = tmp_path / "baselines"
    shutil.copytree(REPO / "results" / "baselines", out, ignore=shutil.ignore_patterns("report"))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    code, text, err = run_kacs(capsys, "run", CONFIGS / "baselines.yaml", "--out", out)
    assert code == 0, err
    assert "Nothing to do: all 2400 selected runs" in " ".join(text.split())
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != ".lock"} == before
    code, _, err = run_kacs(capsys, "run", CONFIGS / "baselines.yaml", "--out", out, "--runs", 31,
                            "--methods", "kan", "--benchmarks", "f1")
    assert code == 2 and err == ("error: method kan needs the optional extra: pip install 'kacs[kan]' (1 of its "
                                 f"runs are still to do in {out})\n")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != ".lock"} == before


def test_a_folder_started_without_an_extra_resumes_once_it_is_installed(capsys, tmp_path, monkeypatch):
    """A campaign begun with `--methods ridge` where interpret is not importable records ebm
    from the config alone; with interpret there the same folder resumes (not refused as "a
    different config"), its record of ebm completed to the class's parameters."""
    cfg = tmp_path / "exp.yaml"
    cfg.write_text("benchmarks: [f1]\nmethods: [ridge, ebm]\nprotocol: {name: main, runs: 1}\n")
    out = tmp_path / "out"
    real = importlib.util.find_spec
    with monkeypatch.context() as hidden:
        hidden.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "interpret" else real(name, *a))
        code, _, err = run_kacs(capsys, "run", cfg, "--out", out, "--methods", "ridge")
        assert code == 0, err
    before = yaml.safe_load((out / "config.yaml").read_text())["cells"][0]["hyperparameters"]["ebm"]
    assert before["partial"] is True and "learning_rate" not in before["params"]
    runs = (out / "runs.csv").read_bytes()
    code, text, err = run_kacs(capsys, "run", cfg, "--out", out, "--methods", "ridge")
    assert code == 0, err
    assert "Nothing to do" in text and (out / "runs.csv").read_bytes() == runs
    after = yaml.safe_load((out / "config.yaml").read_text())["cells"][0]["hyperparameters"]["ebm"]
    assert "partial" not in after and "learning_rate" in after["params"] and after["params"]["max_bins"] == 1024
    assert all(after["params"][k] == v for k, v in before["params"].items())


def test_unknown_method_on_the_command_line_exits_2(capsys, tmp_path):
    cfg = tmp_path / "exp.yaml"
    cfg.write_text("benchmarks: [f1]\nmethods: [ridge, lasso]\n")
    code, _, err = run_kacs(capsys, "run", cfg, "--out", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1 and "methods[1]" in err and "ridge" in err


def test_the_baselines_config_resolves():
    missing = [extra for extra, modules in (("xcsf-lib", ("xcsf",)), ("kan", ("kan", "torch", "tqdm")))
               if any(importlib.util.find_spec(m) is None for m in modules)]
    if missing:
        # Without an extra the config resolves all the same (a finished folder needs no extra);
        # the method's spec names the install, which `kacs run` says where a run is to do.
        config = project_config("baselines")
        method = {"xcsf-lib": "xcsf-lib", "kan": "kan"}[missing[0]]
        assert f"pip install 'kacs[{missing[0]}]'" in config.cells[0].params[method].missing
        pytest.skip(f"the {', '.join(missing)} extra(s) not installed: the config cannot resolve fully")
    config = project_config("baselines")
    assert config.methods == ("xcsf", "kacs", "ridge", "knn", "rf", "gbr", "mlp", "svr", "xcsf-lib", "kan")
    assert [c.label for c in config.cells] == ["f1", "f2", "f3", "f4", "asn", "ccpp", "cs", "eec"]
    assert config.protocol.runs == 30 and config.protocol.name == "main"


# --------------------------------------------------------------------------- optional extras


needs_xcsf = pytest.mark.skipif(importlib.util.find_spec("xcsf") is None,
                                reason="the xcsf-lib extra is not installed (pip install 'kacs[xcsf-lib]')")
needs_kan = pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("kan", "torch", "tqdm")),
                               reason="the kan extra is not installed (pip install 'kacs[kan]')")


@needs_xcsf
def test_xcsf_lib_counts_n_plus_1_weights_per_macro_rule_and_is_deterministic():
    over = {"N": 100, "iterations": 400}
    a, b = fitted("xcsf-lib", over, seed=5), fitted("xcsf-lib", over, seed=5)
    rules = a.estimator.model_.pset_size()
    assert 0 < rules and a.params == rules * (3 + 1)
    assert np.array_equal(a.y_train, b.y_train) and np.all(np.isfinite(a.y_test))
    # the config's iterations reach the library unless the method sets its own
    assert baselines.resolve("xcsf-lib", {}, iterations=1234).args["iterations"] == 1234
    assert baselines.resolve("xcsf-lib", {"iterations": 99}, iterations=1234).iterations == 99
    with pytest.raises(UserError, match="chi"):
        baselines.resolve("xcsf-lib", {"chi": 1.5})


def test_xcsf_lib_refuses_exactly_what_the_declarations_refuse():
    """The library's estimator checks the shared hyperparameters against their one declaration
    (engine/params.py): each bound's own side is accepted or refused as the declared range says,
    before the library is imported, so without the extra too."""
    from sklearn.utils._param_validation import InvalidParameterError

    from kacs_cli.baselines.xcsf_lib import MISSING, XCSFLibRegressor, _HP
    from kacs_cli.engine.params import DECLARED

    X, y = data()

    def refused(**setting) -> bool:
        try:
            XCSFLibRegressor(iterations=5, **setting).fit(X, y)
        except InvalidParameterError as exc:
            assert list(setting)[0] in str(exc)
            return True
        except UserError as exc:  # the extra is missing: every check before the import passed
            assert str(exc) == MISSING
        return False

    checked = 0
    for name in _HP:
        valid = DECLARED[name].valid
        if valid is None:
            continue
        low_in = valid.closed in ("left", "both")
        assert refused(**{name: valid.left}) is not low_in, name
        assert refused(**{name: valid.left - 1}), name
        if valid.right is not None:
            high_in = valid.closed in ("right", "both")
            assert refused(**{name: valid.right}) is not high_in, name
            assert refused(**{name: valid.right + 1}), name
        checked += 1
    assert checked == len(_HP) - 1  # every one but the boolean do_subsumption
    # tau is a fraction of the action set: (0, 1] as declared, not merely >= 0.
    assert refused(tau=0.0) and refused(tau=1.5) and not refused(tau=1.0)
    assert refused(do_subsumption="yes")


@needs_kan
def test_kan_counts_spline_coefficients_and_scales_per_edge_and_is_deterministic():
    over = {"steps": 2, "grid": 3, "k": 3}
    a, b = fitted("kan", over, n=2, seed=1), fitted("kan", over, n=2, seed=1)
    # [2, 5, 1]: 2 * 5 + 5 * 1 = 15 edges, each 3 + 3 coefficients and 2 scales
    assert a.estimator.width_ == [2, 5, 1] and a.params == 15 * 8
    model = a.estimator.model_
    trained = sum(layer.coef.numel() + layer.scale_base.numel() + layer.scale_sp.numel() for layer in model.act_fun)
    assert a.params == trained
    assert np.array_equal(a.y_train, b.y_train) and np.all(np.isfinite(a.y_test))
    assert fitted("kan", {**over, "hidden": 3}, n=2).params == (2 * 3 + 3) * 8
    with pytest.raises(UserError, match="grid_update_num"):
        baselines.resolve("kan", {"grid_update_num": 60})


def test_committed_baselines_hold_every_run_once_and_reuse_the_main_experiment():
    """results/baselines is configs/baselines.yaml run in full (8 benchmarks x 10 methods x
    30 runs, once each), and its KACS and XCSF rows are results/paper/main's, copied."""
    folder = REPO / "results" / "baselines"
    if not (folder / "runs.csv").is_file():
        pytest.skip("results/baselines/runs.csv is not committed")
    # the raw YAML: resolving it would need the optional extras that xcsf-lib and kan name
    raw = yaml.safe_load((CONFIGS / "baselines.yaml").read_text())
    benchmarks = [b if isinstance(b, str) else b["name"] for b in raw["benchmarks"]]
    runs = pd.read_csv(folder / "runs.csv")
    keys = runs[["benchmark", "method", "run"]].apply(tuple, axis=1)
    expected = {(b, m, r) for b in benchmarks for m in raw["methods"] for r in range(raw["protocol"]["runs"])}
    assert len(expected) == 8 * 10 * 30
    assert keys.is_unique and set(keys) == expected
    assert runs["test_mae"].notna().all() and runs["params"].notna().all()
    main = pd.read_csv(REPO / "results" / "paper" / "main" / "runs.csv")
    pair = runs[runs["method"].isin(["kacs", "xcsf"])].drop(columns="experiment")
    copied = pair.merge(main.drop(columns="experiment"), how="left", indicator=True)
    assert len(copied) == 2 * 8 * 30 and (copied["_merge"] == "both").all()


def test_committed_regressors_reuse_the_baselines_and_refine_the_plain_runs():
    """results/regressors is configs/regressors.yaml: every run once; the methods it shares
    with results/baselines (all but the MLP, whose budget converges now) are those runs,
    copied; and each refined run's evolved errors are the plain KACS run's of the same seed."""
    folder = REPO / "results" / "regressors"
    if not (folder / "runs.csv").is_file():
        pytest.skip("results/regressors/runs.csv is not committed")
    raw = yaml.safe_load((CONFIGS / "regressors.yaml").read_text())
    benchmarks = [b if isinstance(b, str) else b["name"] for b in raw["benchmarks"]]
    runs = pd.read_csv(folder / "runs.csv")
    keys = runs[["benchmark", "method", "run"]].apply(tuple, axis=1)
    expected = {(b, m, r) for b in benchmarks for m in raw["methods"] for r in range(raw["protocol"]["runs"])}
    assert len(expected) == 8 * 12 * 30
    assert keys.is_unique and set(keys) <= expected
    old = pd.read_csv(REPO / "results" / "baselines" / "runs.csv").drop(columns="experiment")
    shared = runs[runs["method"].isin(set(old["method"]) - {"mlp"})]
    shared = shared.drop(columns=["experiment", *(c for c in runs.columns if c not in old.columns)])
    copied = shared.merge(old, how="left", indicator=True)
    assert len(copied) == len(shared) and (copied["_merge"] == "both").all()
    plain = runs[runs["method"] == "kacs"].set_index(["benchmark", "run"])
    refined = runs[runs["method"] == "kacs-refined"].set_index(["benchmark", "run"])
    for key in ("train_mae", "test_mae", "train_mse", "test_mse"):
        assert (refined[f"evolved_{key}"] == plain.loc[refined.index, key]).all(), key
    assert (refined["rules"] == plain.loc[refined.index, "rules"]).all()


def test_the_committed_budget_runs_at_100000_iterations_are_the_regressors_runs():
    """Two campaigns, at other times and loads, trained refined KACS runs 0-9 with the same
    settings: the same numbers, bit for bit (the engines and the refinement are deterministic)."""
    budget, regressors = (REPO / "results" / "budget" / "100k", REPO / "results" / "regressors")
    if not ((budget / "runs.csv").is_file() and (regressors / "runs.csv").is_file()):
        pytest.skip("results/budget/100k or results/regressors is not committed")
    a = pd.read_csv(budget / "runs.csv")
    b = pd.read_csv(regressors / "runs.csv")
    b = b[(b["method"] == "kacs-refined") & (b["run"] < 10)]
    columns = ["train_mae", "test_mae", "train_mse", "test_mse", "rules", "evolved_test_mae",
               "refine_iterations"]
    merged = a.merge(b, on=["benchmark", "method", "run"], suffixes=("", "_other"))
    assert len(merged) == len(a) == 80
    for column in columns:
        assert (merged[column] == merged[f"{column}_other"]).all(), column
