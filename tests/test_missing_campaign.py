"""Values removed completely at random in a campaign (a benchmark entry's `missing: f`) and mean
imputation as a method setting (`impute: mean`), docs/configs.md.

The removed cells are checked against their definition (one uniform draw per cell from the
split seed's own stream, missing below f): nested across fractions, the same for every method
and whatever --jobs, near f in share, never the target; `missing: 0` is the data as they are.
The imputation is checked against scikit-learn's SimpleImputer and against a hand-computed
weighted mean, on data whose test rows would move the mean if they entered it.
"""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.impute import SimpleImputer

from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import execution
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.execution import (RunSettings, execute_task, load_cell_rows, mean_imputed,
                                                     missing_cells, run_rows)
from kacs_cli.experiments.campaign.tasks import Task
from kacs_cli.experiments.data.protocols import make_split

from cli_support import run_kacs

FUNCTION = {"name": "f1", "n": 3, "samples": 80}


def _config(benchmarks, methods=None, **top):
    raw = {"experiment": "mcar", "methods": methods or ["kacs"], "benchmarks": benchmarks,
           "hyperparameters": {"N": 100}, "protocol": {"runs": 2}, "iterations": 200, "eval_every": 200, **top}
    return resolve_config(raw)


# --------------------------------------------------------------------------------------------
# the cells removed
# --------------------------------------------------------------------------------------------

def test_the_cells_of_a_smaller_fraction_are_a_subset_and_their_share_is_binomial():
    shape = (400, 10)
    low, high = missing_cells(shape, 0.1, 3), missing_cells(shape, 0.3, 3)
    assert np.all(high[low]) and high.sum() > low.sum()
    for mask, f in ((low, 0.1), (high, 0.3)):
        cells = mask.size
        # within 4 binomial standard deviations of f * cells
        assert abs(mask.sum() - f * cells) < 4 * np.sqrt(cells * f * (1 - f))
    # Another split seed removes other cells; the stream is not the split's own permutation's.
    assert not np.array_equal(missing_cells(shape, 0.3, 4), high)
    assert not np.array_equal(np.random.default_rng(3).random(shape) < 0.3, high)
    assert not missing_cells(shape, 0.0, 3).any()


def test_a_run_removes_its_cells_from_the_inputs_only_and_missing_0_is_the_data_as_they_are():
    config = _config([FUNCTION, {**FUNCTION, "missing": 0.3}, {**FUNCTION, "missing": 0, "label": "zero"}])
    plain, removed, zero = config.cells
    assert [c.label for c in config.cells] == ["f1", "f1-m30", "zero"]
    assert zero.data == plain.data and "missing" not in plain.to_dict(config.methods)
    assert removed.to_dict(config.methods)["missing"] == 0.3
    X, y, _ = load_cell_rows(plain)
    X_plain, y_plain, _ = run_rows(plain, 5)
    assert X_plain is X and y_plain is y  # untouched: bit for bit the rows of today
    assert run_rows(zero, 5)[0] is X
    X_m, y_m, _ = run_rows(removed, 5)
    np.testing.assert_array_equal(y_m, y)  # never the target
    mask = missing_cells(X.shape, 0.3, 5)
    np.testing.assert_array_equal(np.isnan(X_m), mask)
    np.testing.assert_array_equal(X_m[~mask], X[~mask])
    assert not np.isnan(X).any()  # the cached rows stay complete


def test_every_method_of_a_run_sees_the_same_cells(monkeypatch):
    config = _config([{**FUNCTION, "missing": 0.3}], methods=["kacs", "gbr"])
    cell = config.cells[0]
    seen = {}
    real = execution.make_split

    def spy(X, y, *args, **kwargs):
        seen.setdefault(task.method, np.isnan(X).copy())
        return real(X, y, *args, **kwargs)

    monkeypatch.setattr(execution, "make_split", spy)
    settings = RunSettings("mcar", config.protocol, 200, 200, None)
    for method in ("kacs", "gbr"):
        task = Task(cell, method, 1, 1, 1)
        execute_task(task, settings)
    assert seen["kacs"].any()
    np.testing.assert_array_equal(seen["kacs"], seen["gbr"])
    np.testing.assert_array_equal(seen["kacs"], missing_cells(seen["kacs"].shape, 0.3, 1))


# --------------------------------------------------------------------------------------------
# mean imputation
# --------------------------------------------------------------------------------------------

def test_mean_imputation_is_simple_imputers_on_the_train_rows_and_weighs_them():
    nan = np.nan
    train = np.array([[1.0, 10.0], [nan, 20.0], [3.0, nan], [5.0, 40.0]])
    test = np.array([[nan, nan], [1000.0, -1000.0]])
    filled_train, filled_test = mean_imputed(train, test)
    imputer = SimpleImputer(strategy="mean").fit(train)
    np.testing.assert_allclose(filled_train, imputer.transform(train), rtol=1e-15)
    np.testing.assert_allclose(filled_test, imputer.transform(test), rtol=1e-15)
    np.testing.assert_array_equal(filled_test[0], [3.0, 70.0 / 3.0])  # by hand: (1+3+5)/3, (10+20+40)/3
    # weighted: column 0 (1*1 + 3*2 + 5*1) / 4 = 3; column 1 (10*1 + 20*4 + 40*1) / 6 = 130 / 6
    _, weighted = mean_imputed(train, test, np.array([1.0, 4.0, 2.0, 1.0]))
    np.testing.assert_allclose(weighted[0], [3.0, 130.0 / 6.0], rtol=1e-15)
    np.testing.assert_array_equal(weighted[1], test[1])


def test_a_run_imputes_with_its_train_rows_means_only(monkeypatch, tmp_path):
    # Column 0 holds 0..1 on every row but the last five, which hold 1000: were a test row's
    # value to enter the mean, the filled cells would move far outside the train range.
    rng = np.random.default_rng(0)
    rows = 60
    X = rng.random((rows, 2))
    y = X.sum(axis=1)
    split0 = make_split(X, y, "main", 0)
    X[split0.test_index, 0] = 1000.0
    path = tmp_path / "tall.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    config = _config([{"path": str(path), "missing": 0.3}], methods={"ridge-mean": {"method": "ridge", "impute": "mean"}})
    captured = {}

    def fake_fit(spec, seed, X_train, y_train, X_test, sample_weight=None, categorical=()):
        captured["X_train"], captured["X_test"] = X_train, X_test
        raise RuntimeError("captured")

    monkeypatch.setattr(execution.baselines, "fit_predict", fake_fit)
    with pytest.raises(RuntimeError, match="captured"):
        execute_task(Task(config.cells[0], "ridge-mean", 0, 0, 0), RunSettings("mcar", config.protocol, 200, 200, None))
    mask = missing_cells(X.shape, 0.3, 0)
    raw_train, train_mask = X[split0.train_index], mask[split0.train_index]
    mean0 = raw_train[~train_mask[:, 0], 0].mean()
    x_min, x_max = raw_train[~train_mask[:, 0], 0].min(), raw_train[~train_mask[:, 0], 0].max()
    expected = (mean0 - x_min) / (x_max - x_min)
    assert not np.isnan(captured["X_train"]).any() and not np.isnan(captured["X_test"]).any()
    np.testing.assert_allclose(captured["X_train"][train_mask[:, 0], 0], expected, rtol=1e-12)
    np.testing.assert_allclose(captured["X_test"][mask[split0.test_index][:, 0], 0], expected, rtol=1e-12)
    assert 0.0 < expected < 1.0


def test_impute_is_recorded_only_where_set_for_learners_and_baselines():
    config = _config([FUNCTION], methods={"kacs": None, "kacs-mean": {"method": "kacs", "impute": "mean"},
                                          "ridge": None, "ridge-mean": {"method": "ridge", "impute": "mean"}})
    written = config.to_dict()["cells"][0]["hyperparameters"]
    assert "impute" not in written["kacs"] and "impute" not in written["ridge"]
    assert written["kacs-mean"]["impute"] == written["ridge-mean"]["impute"] == "mean"
    assert config.cells[0].params["ridge-mean"].params == config.cells[0].params["ridge"].params


# --------------------------------------------------------------------------------------------
# the command line: a tiny campaign, its determinism, its refusals
# --------------------------------------------------------------------------------------------

def _write(tmp_path, name, body):
    path = tmp_path / f"{name}.yaml"
    path.write_text(body)
    return path


TINY = ("experiment: tiny\nhyperparameters: {N: 60}\nprotocol: {runs: 2}\niterations: 150\neval_every: 150\n"
        "methods: {kacs: null, kacs-impute: {method: kacs, impute: mean}, gbr: {method: gbr, max_iter: 5}}\n"
        "benchmarks:\n"
        "  - {name: f1, n: 2, samples: 50, methods: [kacs, gbr]}\n"
        "  - {name: f1, n: 2, samples: 50, missing: 0.1}\n"
        "  - {name: f1, n: 2, samples: 50, missing: 0.3}\n")


@pytest.mark.slow
def test_a_tiny_campaign_gives_the_same_rows_with_one_or_two_jobs(capsys, tmp_path):
    config = _write(tmp_path, "tiny", TINY)
    frames = []
    for jobs in (1, 2):
        code, _, err = run_kacs(capsys, "run", config, "--out", tmp_path / f"out{jobs}", "--jobs", jobs)
        assert code == 0, err
        frames.append(pd.read_csv(tmp_path / f"out{jobs}" / "runs.csv")
                      .sort_values(["benchmark", "method", "run"]).reset_index(drop=True))
    one, two = frames
    assert set(one["benchmark"]) == {"f1", "f1-m10", "f1-m30"} and len(one) == 2 * (2 + 3 + 3)
    columns = [c for c in one.columns if c != "seconds" and not c.endswith("_seconds")]
    pd.testing.assert_frame_equal(one[columns], two[columns])
    # The complete cell is today's: a config without the key gives its rows bit for bit.
    plain = _write(tmp_path, "plain", TINY.split("benchmarks:")[0] + "benchmarks:\n"
                   "  - {name: f1, n: 2, samples: 50, methods: [kacs, gbr]}\n")
    code, _, err = run_kacs(capsys, "run", plain, "--out", tmp_path / "plain", "--jobs", 1)
    assert code == 0, err
    today = pd.read_csv(tmp_path / "plain" / "runs.csv").sort_values(["method", "run"]).reset_index(drop=True)
    complete = one[one["benchmark"] == "f1"].reset_index(drop=True)
    pd.testing.assert_frame_equal(today[columns], complete[columns])
    # Native and imputed KACS differ on the cells with values removed.
    m30 = one[one["benchmark"] == "f1-m30"].set_index(["method", "run"])["test_mae"]
    assert not np.array_equal(m30["kacs"].to_numpy(), m30["kacs-impute"].to_numpy())


@pytest.mark.parametrize("value, message", [
    (1, "benchmarks[0].missing: must lie in [0, 1), got 1"),
    (-0.1, "benchmarks[0].missing: must lie in [0, 1), got -0.1"),
    ("'ten'", "benchmarks[0].missing: must be a number, got 'ten'"),
])
def test_a_fraction_outside_0_1_is_refused_in_one_line(capsys, tmp_path, value, message):
    config = _write(tmp_path, "bad", f"methods: [kacs]\nbenchmarks: [{{name: f1, missing: {value}}}]\n")
    code, out, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert message in err
    assert not (tmp_path / "out").exists()


def test_an_unknown_imputation_is_refused_in_one_line(capsys, tmp_path):
    config = _write(tmp_path, "bad", "methods: {r: {method: ridge, impute: median}}\nbenchmarks: [f1]\n")
    code, out, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "methods.r: impute must be one of none, mean, got 'median'" in err


def test_a_baseline_that_cannot_take_nan_is_refused_unless_it_imputes(capsys, tmp_path):
    body = ("protocol: {runs: 1}\niterations: 100\nbenchmarks: [{name: f1, n: 2, samples: 40, missing: 0.1}]\n")
    config = _write(tmp_path, "ridge", "methods: [ridge]\n" + body)
    code, out, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "benchmark f1:" in err and "missing (NaN), which ridge cannot take" in " ".join(err.split())
    config = _write(tmp_path, "ridge_mean", "methods: {ridge-mean: {method: ridge, impute: mean}}\n" + body)
    code, out, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out2", "--jobs", 1)
    assert code == 0, err
    assert np.isfinite(pd.read_csv(tmp_path / "out2" / "runs.csv")["test_mae"]).all()


def test_an_input_missing_on_every_train_row_is_refused(capsys, tmp_path):
    rows, fraction = 12, 0.99
    mask = missing_cells((rows, 2), fraction, 0)
    train = make_split(np.zeros((rows, 2)), np.arange(rows, dtype=float), "main", 0).train_index
    assert mask[train].all(axis=0).any()  # the case this test is about, at split seed 0
    data = np.column_stack([np.arange(rows), np.arange(rows) % 3, np.arange(rows)]).astype(float)
    path = tmp_path / "small.csv"
    np.savetxt(path, data, delimiter=",")
    config = _write(tmp_path, "small", f"methods: [kacs]\nprotocol: {{runs: 1}}\n"
                                       f"benchmarks: [{{path: {path}, missing: {fraction}}}]\n")
    code, out, err = run_kacs(capsys, "run", config, "--out", tmp_path / "out")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "benchmark small: on the train split of split seed 0" in err and "no value" in err
    with pytest.raises(UserError, match="no value"):
        cell = resolve_config({"methods": ["kacs"], "benchmarks": [{"path": str(path), "missing": fraction}],
                               "experiment": "x"}).cells[0]
        X, y, _ = run_rows(cell, 0)
        make_split(X, y, "main", 0)


# --------------------------------------------------------------------------------------------
# the report's missing-inputs tables, on hand-made runs
# --------------------------------------------------------------------------------------------

def _report_folder(tmp_path):
    """Two datasets (f1, f2) complete and at 10 %, eight runs each of kacs, kacs-impute (10 %
    only) and gbr, with test MAEs chosen so that every number below follows by hand."""
    config = resolve_config({
        "experiment": "mtiny", "protocol": {"runs": 8}, "iterations": 100,
        "methods": {"kacs": None, "kacs-impute": {"method": "kacs", "impute": "mean"}, "gbr": None},
        "benchmarks": [{"name": "f1", "n": 2, "samples": 50, "methods": ["kacs", "gbr"]},
                       {"name": "f1", "n": 2, "samples": 50, "missing": 0.1},
                       {"name": "f2", "n": 2, "samples": 50, "methods": ["kacs", "gbr"]},
                       {"name": "f2", "n": 2, "samples": 50, "missing": 0.1}]})
    folder = tmp_path / "mtiny"
    folder.mkdir()
    (folder / "config.yaml").write_text(config.to_yaml())
    r = np.arange(8)
    f1, f2 = 0.10 + 0.01 * r, 0.20 + 0.01 * r
    f2_m10 = f2 + np.array([1, -2, 3, -4, 5, -6, 7, -8]) * 0.001
    values = {("f1", "kacs"): f1, ("f1-m10", "kacs"): 1.1 * f1, ("f1-m10", "kacs-impute"): 1.1 * f1 + 0.005 * (r + 1),
              ("f2", "kacs"): f2, ("f2-m10", "kacs"): f2_m10, ("f2-m10", "kacs-impute"): f2_m10 - 0.001 * (r + 1),
              ("f1", "gbr"): np.full(8, 0.3), ("f1-m10", "gbr"): np.full(8, 0.31),
              ("f2", "gbr"): np.full(8, 0.4), ("f2-m10", "gbr"): np.full(8, 0.42)}
    rows = [{"experiment": "mtiny", "benchmark": cell, "variant": "", "method": method, "run": k, "split_seed": k,
             "seed": k, "n": 2, "samples": 50, "N": 6400, "iterations": 100, "train_mae": 0.1, "test_mae": v,
             "train_mse": 0.01, "test_mse": 0.01, "rules": 5, "micro": 5, "params": 10, "aic": 1.0, "seconds": 1.0}
            for (cell, method), vs in values.items() for k, v in enumerate(vs)]
    pd.DataFrame(rows).to_csv(folder / "runs.csv", index=False)
    return folder


@pytest.mark.slow
def test_the_report_reads_the_rise_and_native_against_imputed_by_hand(tmp_path):
    from kacs_cli.reporting.build import build_report
    from kacs_cli.reporting.quoted.common import Source
    from kacs_cli.reporting.quoted.missing_inputs import rises

    folder = _report_folder(tmp_path)
    summary = build_report(folder, formats=("md", "csv"), figures=False)
    found = summary.experiments[0].missing_inputs
    means = found.means.set_index(["dataset", "method", "level"])["mean"]
    assert means[("f1", "kacs", 0.0)] == pytest.approx(0.135) and means[("f1", "kacs", 0.1)] == pytest.approx(0.1485)
    assert means[("f2", "gbr", 0.1)] == pytest.approx(0.42) and ("f1", "kacs-impute", 0.0) not in means.index
    tests = found.tests[found.tests["method"] == "kacs"].set_index(["dataset", "against"])
    # f1: every run 10 % above its complete run: the exact two-sided p of 8 pairs of one sign is
    # 2 / 2^8; Holm over the two datasets doubles the smaller p.
    rise = tests.loc[("f1", "complete data")]
    assert rise["change_pct"] == pytest.approx(10.0) and rise["p"] == pytest.approx(2 / 256)
    assert rise["p_holm"] == pytest.approx(4 / 256) and rise["verdict"] == "worse"
    flat = tests.loc[("f2", "complete data")]
    assert flat["change_pct"] == pytest.approx(100 * (-0.0005 / 0.235)) and flat["verdict"] == "no difference"
    assert flat["p_holm"] == pytest.approx(flat["p"]) and flat["p"] > 0.5
    # Against imputation: f1's native runs all lower, f2's all higher; both p = 2/256, Holm 4/256.
    assert tests.loc[("f1", "kacs-impute"), "verdict"] == "better"
    assert tests.loc[("f2", "kacs-impute"), "verdict"] == "worse"
    assert tests.loc[("f2", "kacs-impute"), "p_holm"] == pytest.approx(4 / 256)
    # Gradient boosting, a baseline that imputes nothing, is native too (no twin): every run
    # 0.01 resp. 0.02 above its complete run, p = 2/256 on each dataset, Holm 4/256 on both.
    boosted = found.tests[found.tests["method"] == "gbr"].set_index("dataset")
    assert boosted["against"].tolist() == ["complete data"] * 2
    assert boosted.loc["f1", "change_pct"] == pytest.approx(100 * (0.31 / 0.3 - 1))
    assert boosted["p_holm"].tolist() == pytest.approx([4 / 256] * 2) and set(boosted["verdict"]) == {"worse"}
    suite = found.summary.set_index(["method", "against"])
    # suite-mean rise: ((0.1485 + 0.2345) / 2) / ((0.135 + 0.235) / 2) - 1
    assert suite.loc[("kacs", "complete data"), "change_pct"] == pytest.approx(100 * (0.3830 / 0.370 - 1))
    assert suite.loc[("kacs", "complete data"), ["better", "worse", "no difference"]].tolist() == [0, 1, 1]
    assert suite.loc[("kacs", "kacs-impute"), ["better", "worse", "no difference"]].tolist() == [1, 1, 0]
    assert suite.loc[("gbr", "complete data"), "change_pct"] == pytest.approx(100 * (0.365 / 0.35 - 1))
    md = re.sub(" +", " ", (folder / "report" / "report.md").read_text())
    assert "mtiny: missing inputs, mean test MAE" in md and "| f1 | kacs | 0.1350 (8) | 0.1485 (8) |" in md
    assert "| f1 | kacs-impute | | 0.1710 (8) |" in md
    assert "| kacs | 10 % | complete data | 2 | 0.1915 | 0.1850 | +3.5 % | 0 / 1 / 1 |" in md
    assert "| gbr | 10 % | complete data | 2 | 0.3650 | 0.3500 | +4.3 % | 0 / 2 / 0 |" in md
    written = pd.read_csv(folder / "report" / "mtiny_missing-inputs.csv")
    assert len(written) == 4 + 2 + 2 + 1 and set(written["dataset"]) == {"f1", "f2", "suite"}
    # The docs' quoted table (quoted/missing_inputs.py) shows the same numbers, a row per dataset and share.
    headers, rows = rises(Source(summary.experiments[0], folder / "report")).tables["rises"]
    assert headers == ["dataset", "removed", "kacs complete", "kacs native", "change", "against imputed",
                       "gbr native", "change"]
    assert rows[0] == ["f1", "10 %", "0.1350", "0.1485", "+10.0 % -", "-13.2 % +", "0.3100", "+3.3 % -"]
    assert rows[-1][:5] == ["suite", "10 %", "0.1850", "0.1915", "+3.5 %"]


def test_a_campaign_without_missing_cells_has_no_missing_inputs_tables(tmp_path):
    from kacs_cli.reporting.build import build_report

    folder = _report_folder(tmp_path)
    runs = pd.read_csv(folder / "runs.csv")
    runs[~runs["benchmark"].str.endswith("-m10")].to_csv(folder / "runs.csv", index=False)
    config = resolve_config({"experiment": "mtiny", "protocol": {"runs": 8}, "iterations": 100,
                             "methods": ["kacs", "gbr"],
                             "benchmarks": [{"name": "f1", "n": 2, "samples": 50}, {"name": "f2", "n": 2, "samples": 50}]})
    (folder / "config.yaml").write_text(config.to_yaml())
    summary = build_report(folder, formats=("md", "csv"), figures=False)
    assert summary.experiments[0].missing_inputs is None
    assert "missing inputs" not in (folder / "report" / "report.md").read_text()
    assert not (folder / "report" / "mtiny_missing-inputs.csv").exists()


def test_the_learned_values_quote_turns_the_pairwise_rows_round_to_learned_against_centre():
    """quoted/missing_inputs.learned on two hand-made rows of the report's pairwise table, as
    the report orders the pair (centre first): learned's change, its sign, the suite's row."""
    from types import SimpleNamespace

    from kacs_cli.reporting.quoted.missing_inputs import learned

    pairwise = pd.DataFrame([
        {"metric": "test_mae", "a": "kacs-recommended", "b": "kacs-recommended-learned", "cell": c, "cell_id": c,
         "n_pairs": 10, "identical": 0, "a_mean": centre, "b_mean": learnt,
         "change_pct": 100 * (centre / learnt - 1), "p": p, "p_holm": p_holm, "verdict": verdict}
        for c, centre, learnt, p, p_holm, verdict in (("d1", 0.20, 0.18, 0.002, 0.004, "worse"),
                                                      ("d2", 0.10, 0.11, 0.3, 0.3, "level"))])
    quoted = learned(SimpleNamespace(report=lambda kind: pairwise))
    headers, rows = quoted.tables["learned"]
    assert headers == ["dataset", "runs", "centre", "learned", "change"]
    # d1: 0.18 / 0.20 - 1 = -10 %, the centre "worse" against learned is learned "better" (+)
    assert rows == [["d1", "10", "0.2000", "0.1800", "-10.0 % +"], ["d2", "10", "0.1000", "0.1100", "+10.0 % ~"],
                    ["suite", "", "0.1500", "0.1450", "-3.3 %"]]
    assert quoted.values == {"learned-better": "1 of 2", "learned-worse": "0 of 2", "learned-level": "1 of 2"}
