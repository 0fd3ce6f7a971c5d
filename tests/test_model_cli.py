"""`kacs fit`, `kacs predict`, `kacs plot-model` end to end, and their one-line errors."""

import re

import numpy as np
import pytest

from kacs_cli import KACSRegressor, XCSFRegressor, load
from kacs_cli.cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def csv_data(tmp_path_factory):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1.0, 1.0, (200, 2)) * [1.0, 10.0]
    y = np.sin(3.0 * X[:, 0]) + 0.01 * X[:, 1] ** 2 + 5.0
    folder = tmp_path_factory.mktemp("cli")
    path = folder / "data.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    inputs = folder / "inputs.csv"
    np.savetxt(inputs, X[:20], delimiter=",", fmt="%.17g")
    return X, y, path, inputs


def run_ok(argv, capsys):
    """Run the CLI; a success may return or exit 0."""
    try:
        main([str(a) for a in argv])
    except SystemExit as exc:
        assert exc.code in (0, None), capsys.readouterr().err
    return capsys.readouterr()


def run_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert exc.value.code == 2
    assert "Traceback" not in captured.err
    return captured.err


@pytest.mark.slow
def test_fit_predict_plot_end_to_end(csv_data, tmp_path, capsys):
    X, y, data, inputs = csv_data
    model = tmp_path / "model.kacs"
    out = run_ok(["fit", data, "--method", "kacs", "--out", model, "--iterations", 3000,
                  "--seed", 5, "--P-hash", 0.2], capsys).out
    assert "KACS fitted" in out and "P_hash 0.2" in out and str(model) in out
    est = KACSRegressor.load(model)
    assert est.iterations_done_ == 3000 and est.P_hash == 0.2 and est.random_state == 5
    # the command is the estimator: same data, same arguments, same model
    direct = KACSRegressor(n_iter=3000, random_state=5, P_hash=0.2).fit(X, y)
    np.testing.assert_array_equal(direct.predict(X), est.predict(X))

    # predict: n input columns, printed one per line
    printed = run_ok(["predict", model, inputs], capsys).out
    values = np.array([float(v) for v in printed.split()])
    np.testing.assert_array_equal(values, est.predict(X[:20]))

    # predict: n + 1 columns (target last) into a file, with the MAE reported
    pred_file = tmp_path / "pred.csv"
    captured = run_ok(["predict", model, data, "--out", pred_file], capsys)
    assert "MAE" in captured.out and "wrote 200 predictions" in captured.out
    np.testing.assert_array_equal(np.loadtxt(pred_file), est.predict(X))

    # plot-model: default output next to the model, and an explicit one
    out = run_ok(["plot-model", model], capsys).out
    png = model.with_suffix(".png")
    assert png.read_bytes()[:8] == PNG_SIGNATURE and "5 outer functions" in out
    other = tmp_path / "functions.png"
    run_ok(["plot-model", model, "--out", other, "--points", 50], capsys)
    assert other.read_bytes()[:8] == PNG_SIGNATURE


def test_fit_xcsf_and_default_p_hash(csv_data, tmp_path, capsys):
    X, y, data, _ = csv_data
    model = tmp_path / "x.kacs"
    out = run_ok(["fit", data, "-m", "xcsf", "-o", model, "-n", 2000], capsys).out
    assert "XCSF fitted" in out and "P_hash 0.8" in out  # a user CSV counts as real-world data
    est = load(model)
    assert isinstance(est, XCSFRegressor) and est.P_hash == 0.8

    err = run_error(["plot-model", model], capsys)
    assert err.startswith("error:") and "XCSF" in err and len(err.strip().splitlines()) == 1


def test_fit_under_the_article_semantics_or_one_switch(csv_data, tmp_path, capsys):
    X, y, data, _ = csv_data
    model = tmp_path / "s.kacs"
    run_ok(["fit", data, "-m", "xcsf", "-o", model, "-n", 300, "--switch", "article_xcsf_inputs",
            "--switch", "article_mutation"], capsys)
    est = load(model)
    assert est.semantics == "reference" and est.article_xcsf_inputs and est.article_mutation
    assert not est.article_offspring and est.model_.hp.article_xcsf_inputs
    run_ok(["fit", data, "-o", model, "-n", 300, "--semantics", "article"], capsys)
    est = load(model)
    assert est.semantics == "article" and est.model_.hp.article_deletion_timing
    err = run_error(["fit", data, "-o", model, "-n", 10, "--switch", "article_everything"], capsys)
    assert "--switch" in err and "article_mutation" in err and len(err.strip().splitlines()) == 1


def test_bad_input_is_one_line_and_exit_2(csv_data, tmp_path, capsys):
    X, y, data, inputs = csv_data
    missing = tmp_path / "missing.csv"
    for argv in (
        ["fit", missing, "--out", tmp_path / "m.kacs"],
        ["fit", data, "--method", "nn", "--out", tmp_path / "m.kacs", "-n", 10],
        ["fit", data, "--out", tmp_path / "m.kacs", "-n", 0],
        ["fit", data, "--out", tmp_path / "m.kacs", "-n", 10, "--P-hash", 1.5],
        ["predict", tmp_path / "missing.kacs", inputs],
        ["predict", data, inputs],  # a CSV is not a model file
        ["plot-model", tmp_path / "missing.kacs"],
    ):
        err = run_error(argv, capsys)
        assert err.startswith("error:") and len(err.strip().splitlines()) == 1, (argv, err)
    assert not (tmp_path / "m.kacs").exists()

    model = tmp_path / "k.kacs"
    run_ok(["fit", data, "--out", model, "-n", 200], capsys)
    err = run_error(["predict", model, missing], capsys)
    assert "not found" in err
    wide = tmp_path / "wide.csv"
    np.savetxt(wide, np.ones((4, 5)), delimiter=",")
    err = run_error(["predict", model, wide], capsys)
    assert "5 columns" in err and "2 inputs" in err
    err = run_error(["plot-model", model, "--out", tmp_path / "x.txt"], capsys)
    assert ".png" in err


def test_fit_creates_a_missing_out_folder_like_run_does(csv_data, tmp_path, capsys):
    X, y, data, inputs = csv_data
    model = tmp_path / "new" / "sub" / "m.kacs"
    run_ok(["fit", data, "--out", model, "-n", 100], capsys)
    assert model.is_file()
    # Bad input still leaves no folder behind.
    err = run_error(["fit", data, "--out", tmp_path / "other" / "m.kacs", "-n", 10, "--P-hash", 1.5], capsys)
    assert "P_hash" in err or "P-hash" in err
    assert not (tmp_path / "other").exists()


@pytest.mark.slow
def test_every_out_creates_its_missing_folder(csv_data, tmp_path, capsys):
    X, y, data, inputs = csv_data
    model = tmp_path / "models" / "m.kacs"
    run_ok(["fit", data, "--out", model, "-n", 100], capsys)
    predictions = tmp_path / "new" / "predictions.txt"
    run_ok(["predict", model, inputs, "--out", predictions], capsys)
    assert len(predictions.read_text().splitlines()) == 20
    picture = tmp_path / "figures" / "deep" / "m.png"
    run_ok(["plot-model", model, "--out", picture, "--points", 20], capsys)
    assert picture.read_bytes().startswith(PNG_SIGNATURE)
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_folder_where_a_file_is_expected_and_the_reverse_get_one_message(csv_data, tmp_path, capsys):
    X, y, data, inputs = csv_data
    model = tmp_path / "m.kacs"
    run_ok(["fit", data, "--out", model, "-n", 100], capsys)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for argv, example in ((["fit", data, "--out", folder, "-n", 10], "model.kacs"),
                          (["predict", model, inputs, "--out", folder], "predictions.txt"),
                          (["plot-model", model, "--out", folder], "model.png")):
        err = run_error(argv, capsys)
        assert err == (f"error: --out {folder} is a folder, where a file is expected; give a file name such as "
                       f"{folder / example}\n"), (argv, err)
    a_file = tmp_path / "a-file"
    a_file.write_text("x\n")
    config = tmp_path / "exp.yaml"
    config.write_text("experiment: exp\nbenchmarks: [{name: f3, n: 2, samples: 100}]\n"
                      "hyperparameters: {N: 200}\nprotocol: {runs: 1}\niterations: 100\n")
    err = run_error(["run", config, "--out", a_file], capsys)  # (the report's: tests/test_faults.py)
    assert err == f"error: --out {a_file} is a file, where a folder is expected; choose another --out\n", err
    # A file in the way of the folder to create.
    for argv in (["fit", data, "--out", a_file / "m.kacs", "-n", 10], ["run", config, "--out", a_file / "out"]):
        err = run_error(argv, capsys)
        assert err == (f"error: --out {argv[argv.index('--out') + 1]}: {a_file} is a file, where a folder is "
                       f"expected; choose another --out\n"), err
    assert a_file.read_text() == "x\n"


def test_the_estimators_refuse_what_kacs_fit_refuses_in_the_same_words(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.random((12, 2))
    constant = tmp_path / "constant.csv"
    np.savetxt(constant, np.column_stack([X, np.full(12, 4.5)]), delimiter=",")
    err = run_error(["fit", constant, "--out", tmp_path / "m.kacs", "-n", 10], capsys)
    words = "is constant (4.5) on all 12 rows; a regression target must vary"
    assert words in err
    for cls in (KACSRegressor, XCSFRegressor):
        with pytest.raises(ValueError, match=re.escape(f"y (the target) {words}")):
            cls(n_iter=10).fit(X, np.full(12, 4.5))
        with pytest.raises(ValueError, match="found 1 data row; fit needs at least 2"):
            cls(n_iter=10).fit(X[:1], [1.0])
        # Not numpy's UFuncTypeError from deep inside the scaling.
        with pytest.raises(ValueError, match=r"y \(the target\) holds the non-numeric value 'low'; every value "
                                             r"must be a number"):
            cls(n_iter=10).fit(X, ["low", "high"] * 6)
        with pytest.raises(ValueError, match=r"holds numbers as text \('1.5'\)"):
            cls(n_iter=10).fit(X, np.array(["1.5", "2"] * 6))


def test_one_extreme_value_that_collapses_a_column_is_worth_a_warning(tmp_path, capsys):
    from kacs_cli.scaling import ScaleWarning, collapsed

    rng = np.random.default_rng(1)
    X = rng.random((50, 3))
    X[7, 1] = 1e308  # the rest of the column ends up in [0, 1e-308] of the scale
    X[:, 2] = (np.arange(50) < 3).astype(float)  # mostly 0, a few 1: scaled well, no warning
    y = X[:, 0] * 2.0
    with pytest.warns(ScaleWarning, match=r"column 1 of X: the extreme value 1e\+308 stretches the min-max scale") as w:
        KACSRegressor(n_iter=50).fit(X, y)
    assert len(w) == 1 and "or give input_range" in str(w[0].message)
    assert collapsed(X[:, [0, 2]]) == [] and collapsed(np.r_[y, -1e300])[0][0] == 0
    data = tmp_path / "big.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    captured = run_ok(["fit", data, "--out", tmp_path / "m.kacs", "-n", 50], capsys)
    assert captured.err.count("\n") == 1 and captured.err.startswith(f"warning: {data}: column 1 of X: ")


def test_the_project_datasets_are_not_collapsed(shared_data_dir):
    from kacs_cli.experiments.data.datasets import load_csv
    from kacs_cli.scaling import collapsed

    for path in sorted(shared_data_dir.glob("*.csv")):
        X, y = load_csv(path)
        assert collapsed(np.column_stack([X, y])) == [], path.name
