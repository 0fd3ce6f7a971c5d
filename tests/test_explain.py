"""`KACSRegressor.explain` and `kacs explain` (kacs_cli/estimators/explain.py, docs/explain.md):
shares on a hand-built model whose answer is computed by hand, a trained model whose target
depends on one input, the rule table's round trip, the figures' panels, and the command's
outputs and one-line errors."""

import json

import numpy as np
import pandas as pd
import pytest

from kacs_cli import KACSRegressor, XCSFRegressor, load
from kacs_cli.cli.explain import OUTPUTS
from kacs_cli.errors import UserError
from kacs_cli.estimators.explain import RULE_COLUMNS, SHARE_COLUMNS, UNIFORM_ROWS, explain_model

from cli_support import run_kacs
from test_engine_support import finish, put_rule

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RULE_FIELDS = ["type", "q", "p", "lower", "upper", "w0", "w1", "F", "num", "eps", "exp"]


def hand_built(rules, n=2):
    """A KACS estimator on [0, 1]^n with the target scale [-1, 1] (both scalings the identity),
    whose population is exactly `rules`: (type, q, p, lower, upper, w0, w1, F)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, (20, n))
    est = KACSRegressor(n_iter=1, N=200, random_state=0, input_range=(0.0, 1.0),
                        target_range=(-1.0, 1.0)).fit(X, X[:, 0])
    s_in = n * (2 * n + 1)
    pop = est.model_.pop
    for i, (kind, q, p, lo, hi, w0, w1, F) in enumerate(rules):
        sub = (q - 1) * n + (p - 1) if kind == "inner" else s_in + q - 1
        put_rule(pop, i, lo, hi, (w0, w1), F, sub=sub, num=i + 1, exp=3 * i)
    finish(pop, len(rules))
    est.zhat_range_ = None
    return est


def grid_rows(k=11):
    g = np.linspace(0.0, 1.0, k)
    return np.array([(a, b) for a in g for b in g])


# Channel 1 carries input 1 linearly, channel 2 carries input 2 into a bent outer function
# (3z up to 0.5, then flat at 1.5: two overlapping rules that agree where both match, at the
# bound 0.5, which the grid hits); channels 3 to 5 have no rules and contribute 0.
BENT = [
    ("inner", 1, 1, 0.0, 1.0, 0.0, 2.0, 0.5),
    ("inner", 2, 2, 0.0, 1.0, 0.0, 1.0, 0.7),
    ("outer", 1, 0, -10.0, 10.0, 0.0, 1.0, 0.3),
    ("outer", 2, 0, -10.0, 0.5, 0.0, 3.0, 0.2),
    ("outer", 2, 0, 0.5, 10.0, 1.5, 0.0, 0.9),
]


def test_shares_of_a_hand_built_model_are_the_hand_computed_ones():
    est = hand_built(BENT)
    X = grid_rows()
    x1, x2 = X[:, 0], X[:, 1]
    phi1, phi2 = 2.0 * x1, np.minimum(3.0 * x2, 1.5)
    y_hat = phi1 + phi2
    np.testing.assert_allclose(est.predict(X), y_hat, atol=1e-12)

    ex = est.explain(X)
    var_y = y_hat.var()
    channels = ex.channel_shares
    assert channels["index"].tolist() == [1, 2, 3, 4, 5]
    v = np.array([phi1.var(), phi2.var(), 0.0, 0.0, 0.0])
    np.testing.assert_allclose(channels["variance"], v, atol=1e-12)
    np.testing.assert_allclose(channels["share"], v / v.sum(), atol=1e-12)
    cov = [np.cov(phi1, y_hat, bias=True)[0, 1], np.cov(phi2, y_hat, bias=True)[0, 1], 0, 0, 0]
    np.testing.assert_allclose(channels["covariance_share"], np.array(cov) / var_y, atol=1e-12)
    assert channels["covariance_share"].sum() == pytest.approx(1.0, abs=1e-12)

    # Input p's inner values held at their mean over the rows: x1's 2 x1 at 1.0, x2's x2 at 0.5.
    e1 = phi1 - 1.0
    e2 = phi2 - 1.5
    inputs = ex.input_shares
    np.testing.assert_allclose(inputs["variance"], [e1.var(), e2.var()], atol=1e-12)
    np.testing.assert_allclose(inputs["share"], [e1.var(), e2.var()] / (e1.var() + e2.var()),
                               atol=1e-12)
    # Additive on the grid (independent inputs, one channel each): the shares add up to 1.
    assert inputs["covariance_share"].sum() == pytest.approx(1.0, abs=1e-12)
    assert inputs["label"].tolist() == ["x1", "x2"] and set(inputs["basis"]) == {"data"}
    assert set(inputs["rows"]) == {121}
    # Each input acts through its own channel only.
    expected = np.zeros((5, 2))
    expected[0, 0], expected[1, 1] = e1.var(), e2.var()
    np.testing.assert_allclose(ex.pathways, expected, atol=1e-12)
    assert list(ex.shares().columns) == list(SHARE_COLUMNS)


def test_an_interaction_shows_as_covariance_shares_that_do_not_add_up():
    # One channel, Phi(z) = z on [0, 1] and 0 above (an empty stretch contributes 0):
    # yhat = (x1 + x2) when x1 + x2 <= 1, else 0. Not additive.
    est = hand_built([
        ("inner", 1, 1, 0.0, 1.0, 0.0, 1.0, 1.0),
        ("inner", 1, 2, 0.0, 1.0, 0.0, 1.0, 1.0),
        ("outer", 1, 0, 0.0, 1.0, 0.0, 1.0, 1.0),
    ])
    X = grid_rows()
    s = X.sum(axis=1)
    y_hat = np.where(s <= 1.0, s, 0.0)
    np.testing.assert_allclose(est.predict(X), y_hat, atol=1e-12)
    ex = est.explain(X)
    held1 = 0.5 + X[:, 1]  # x1 held at its mean 0.5
    e1 = y_hat - np.where(held1 <= 1.0, held1, 0.0)
    assert ex.input_shares["variance"].iloc[0] == pytest.approx(e1.var(), abs=1e-12)
    # Symmetric in the two inputs.
    assert ex.input_shares["share"].tolist() == pytest.approx([0.5, 0.5], abs=1e-12)
    assert abs(ex.input_shares["covariance_share"].sum() - 1.0) > 0.05
    assert ex.channel_shares["share"].iloc[0] == pytest.approx(1.0)


def test_a_constant_input_has_no_share_and_a_constant_prediction_none_at_all():
    est = hand_built(BENT)
    X = grid_rows()
    X[:, 1] = 0.3
    ex = est.explain(X)
    assert ex.input_shares["variance"].iloc[1] == 0.0
    assert ex.input_shares["share"].tolist() == [1.0, 0.0]
    X[:, 0] = 0.6
    ex = est.explain(X)
    assert ex.prediction_variance == 0.0 and ex.input_shares["share"].isna().all()
    assert "constant" in ex.summary()


@pytest.fixture(scope="module")
def one_input_model():
    """n = 3, the target a function of x1 alone: x2 and x3 are irrelevant."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-2.0, 5.0, (300, 3))
    y = np.sin(0.9 * X[:, 0])
    return KACSRegressor(n_iter=20_000, N=800, random_state=0).fit(X, y), X, y


def test_a_model_of_one_input_gives_it_nearly_all_the_share(one_input_model):
    est, X, _ = one_input_model
    ex = est.explain(X)
    shares = ex.input_shares["share"].to_numpy()
    assert shares[0] > 0.85, ex.input_shares
    assert shares.sum() == pytest.approx(1.0)
    assert ex.channel_shares["share"].sum() == pytest.approx(1.0)
    assert ex.channel_shares["covariance_share"].sum() == pytest.approx(1.0, abs=1e-9)
    assert ex.summary().splitlines()[2].startswith("  inputs:   x1 ")
    # Without data: a fixed uniform sample of the input space, the same every time.
    uniform = est.explain()
    assert uniform.basis == "uniform" and uniform.rows == UNIFORM_ROWS
    assert uniform.input_shares["share"].iloc[0] > 0.85
    pd.testing.assert_frame_equal(uniform.shares(), est.explain().shares())


def test_the_function_evaluator_is_the_engine(one_input_model):
    est, X, _ = one_input_model
    ex = est.explain(X)
    c = est.predict_components(X)
    Xs = est.scale_inputs(X)
    for q in range(1, 8):
        for p in range(1, 4):
            np.testing.assert_allclose(ex.functions[("inner", q, p)](Xs[:, p - 1]),
                                       c.psihat[:, q - 1, p - 1], atol=1e-12)
        np.testing.assert_allclose(ex.functions[("outer", q, 0)](c.zhat[:, q - 1]),
                                   c.phihat[:, q - 1], atol=1e-12)


@pytest.mark.slow
def test_rule_table_round_trips_through_csv_and_json(one_input_model, tmp_path):
    est, X, _ = one_input_model
    ex = est.explain(X)
    paths = ex.write(tmp_path)
    assert [p.name for p in paths] == list(OUTPUTS)
    rules = est.rules_
    assert list(ex.rules.columns) == list(RULE_COLUMNS) and len(ex.rules) == est.n_rules_

    csv = pd.read_csv(tmp_path / "rules.csv")
    doc = json.loads((tmp_path / "rules.json").read_text())
    assert doc["n_rules"] == est.n_rules_ and doc["columns"] == RULE_COLUMNS
    from_json = pd.DataFrame(doc["rules"])
    for table in (csv, from_json):
        assert sorted(table["rule"]) == list(range(est.n_rules_))
        back = rules.iloc[table["rule"].to_numpy()].reset_index(drop=True)
        for name in RULE_FIELDS:
            np.testing.assert_array_equal(table[name].to_numpy(), back[name].to_numpy(), err_msg=name)
        inner = (table["type"] == "inner").to_numpy()
        p0 = table["p"].to_numpy()[inner] - 1
        x_lower = est.x_min_[p0] + table["lower"].to_numpy()[inner] * (est.x_max_ - est.x_min_)[p0]
        np.testing.assert_allclose(table["x_lower"].to_numpy(np.float64)[inner], x_lower, rtol=1e-15)
        assert table["x_upper"][~inner].isna().all()
    # Sorted by submodel: inner (q, p) first, then outer q.
    kinds = ex.rules["type"].tolist()
    assert kinds == sorted(kinds)  # "inner" < "outer"
    shares = pd.read_csv(tmp_path / "shares.csv")
    assert list(shares.columns) == list(SHARE_COLUMNS) and len(shares) == 3 + 7


def test_quantile_inputs_have_no_original_unit_bounds():
    rng = np.random.default_rng(3)
    X = rng.exponential(1.0, (200, 2))
    est = KACSRegressor(n_iter=2000, N=300, input_transform="quantile").fit(X, X[:, 0])
    ex = est.explain(X)
    assert ex.rules["x_lower"].isna().all() and ex.rules["x_upper"].isna().all()
    assert "quantile" in ex.figure_inputs().axes[0].get_xlabel()


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 20])
def test_figures_are_small_multiples(n):
    rng = np.random.default_rng(n)
    X = rng.uniform(0.0, 1.0, (150, n))
    est = KACSRegressor(n_iter=300, N=2000, random_state=0).fit(X, X[:, 0] + X[:, 1] ** 2)
    ex = est.explain(X)
    import matplotlib.pyplot as plt

    for build, panels in ((ex.figure_inputs, n), (ex.figure_channels, 2 * n + 1),
                          (ex.figure_shares, 2)):
        fig = build()
        try:
            assert len(fig.axes) == panels
            assert max(len(ax.lines) for ax in fig.axes) <= 2 * n + 1
        finally:
            plt.close(fig)


@pytest.mark.slow
def test_written_files_are_deterministic(tmp_path):
    est = hand_built(BENT)
    X = grid_rows()
    first = est.explain(X).write(tmp_path / "a")
    second = est.explain(X).write(tmp_path / "b")
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert (tmp_path / "a" / "inputs.png").read_bytes()[:8] == PNG_SIGNATURE


def test_bad_rows_are_one_line_user_errors():
    est = hand_built(BENT)
    # (a missing value, NaN, is measured as predicted: tests/test_missing.py)
    for X in (np.ones((5, 3)), np.ones((1, 2)), np.array([[0.1, np.inf], [0.2, 0.3]])):
        with pytest.raises(UserError) as exc:
            est.explain(X)
        assert len(str(exc.value).splitlines()) == 1


# ------------------------------------------------------------------------------------------
# kacs explain
# ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain")
    rng = np.random.default_rng(4)
    X = rng.uniform(0.0, 3.0, (120, 3))
    y = np.cos(X[:, 1]) + 0.1 * X[:, 0]
    data = folder / "data.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    inputs = folder / "inputs.csv"
    np.savetxt(inputs, X, delimiter=",", fmt="%.17g")
    model = folder / "m.kacs"
    KACSRegressor(n_iter=2000, N=400).fit(X, y).save(model)
    xcsf = folder / "x.kacs"
    XCSFRegressor(n_iter=500, N=200).fit(X, y).save(xcsf)
    return folder, data, inputs, model, xcsf


@pytest.mark.slow
def test_explain_writes_every_output_beside_the_model(cli_files, capsys):
    folder, data, inputs, model, _ = cli_files
    code, out, err = run_kacs(capsys, "explain", model, "--data", data)
    assert code == 0, err
    target = folder / "m_explain"
    assert sorted(p.name for p in target.iterdir()) == sorted(OUTPUTS)
    assert "inputs:" in out and "channels:" in out and "120 rows of the data" in out
    assert f"to {target}" in out
    shares = pd.read_csv(target / "shares.csv")
    # n input columns give the same shares as n + 1.
    other = folder / "inputs_only"
    code, _, err = run_kacs(capsys, "explain", model, "-d", inputs, "-o", other)
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_csv(other / "shares.csv"), shares)
    # Without data: the uniform sample.
    code, out, _ = run_kacs(capsys, "explain", model, "-o", folder / "nodata")
    assert code == 0 and "uniform sample" in out
    assert set(pd.read_csv(folder / "nodata" / "shares.csv")["basis"]) == {"uniform"}


def test_explain_errors_are_one_line_and_write_nothing(cli_files, capsys):
    folder, data, _, model, xcsf = cli_files
    wide = folder / "wide.csv"
    np.savetxt(wide, np.ones((4, 6)), delimiter=",")
    words = folder / "words.csv"
    words.write_text("a,b,c\n1,2,3\n")
    a_file = folder / "a_file"
    a_file.write_text("")
    cases = [
        (["explain", xcsf, "-o", folder / "e1"], "explain draws KACS models only"),
        (["explain", model, "--data", wide, "-o", folder / "e2"], "6 columns"),
        (["explain", model, "--data", words, "-o", folder / "e3"], "non-numeric"),
        (["explain", model, "--data", folder / "missing.csv", "-o", folder / "e4"], "not found"),
        (["explain", folder / "missing.kacs", "-o", folder / "e5"], "missing.kacs"),
        (["explain", model, "-o", a_file], "is a file"),
    ]
    for argv, words_expected in cases:
        code, out, err = run_kacs(capsys, *argv)
        assert code == 2, (argv, out, err)
        assert err.startswith("error:") and len(err.strip().splitlines()) == 1, err
        assert words_expected in err, err
        assert "Traceback" not in err
    assert not any((folder / f"e{i}").exists() for i in range(1, 6))
    assert not (folder / "x_explain").exists()
    # The API refuses XCSF as the command does.
    with pytest.raises(UserError, match="KACS models only"):
        explain_model(load(xcsf))


def test_a_categorical_input_is_labelled_by_its_categories(tmp_path):
    """explain names a categorical input's positions by its categories: the rule table's
    `categories` column and the inputs figure's ticks, in their order on the axis."""
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue"], 200).astype(object)
    a = rng.uniform(size=200)
    y = a + np.select([colour == "red", colour == "green"], [2.0, 0.0], 1.0)  # green < blue < red
    X = pd.DataFrame({"a": a, "colour": colour})
    est = KACSRegressor(n_iter=1500, N=200, P_hash=0.8, random_state=0, categorical_features=["colour"]).fit(X, y)
    ex = est.explain(X)
    assert ex.categories == {1: ["green", "blue", "red"]}
    rules = ex.rules
    on_colour = (rules["type"] == "inner") & (rules["p"] == 2)
    assert on_colour.any()
    for row in rules[on_colour].itertuples():
        # positions 1/6, 3/6, 5/6 against the interval, by hand
        expected = [name for name, x in zip(["green", "blue", "red"], [1 / 6, 3 / 6, 5 / 6])
                    if row.lower <= x <= row.upper]
        assert row.categories == "|".join(expected)
    assert rules.loc[on_colour, "x_lower"].isna().all() and rules.loc[on_colour, "x_upper"].isna().all()
    assert (rules.loc[~on_colour, "categories"] == "").all()
    assert rules.loc[(rules["type"] == "inner") & (rules["p"] == 1), "x_lower"].notna().all()
    fig = ex.figure_inputs()
    try:
        ticks = [t.get_text() for t in fig.axes[1].get_xticklabels()]
        assert ticks == ["green", "blue", "red"]
        np.testing.assert_allclose(fig.axes[1].get_xticks(), [1 / 6, 3 / 6, 5 / 6])
        assert "colour (categories by mean target)" == fig.axes[1].get_xlabel()
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)
    ex.write(tmp_path)
    doc = json.loads((tmp_path / "rules.json").read_text())
    assert {r["categories"] for r in doc["rules"] if r["type"] == "inner" and r["p"] == 2} <= {
        "green", "blue", "red", "green|blue", "blue|red", "green|blue|red", ""}


@pytest.mark.slow
def test_explain_and_predict_take_the_dataset_names_their_file_message_offers(shared_data_dir, tmp_path,
                                                                               capsys, monkeypatch):
    """A missing --data file's message lists the dataset names; each of them is read as `kacs
    fit` reads it (its inputs, the target dropped), and an existing file of that name stays a file."""
    from kacs_cli.experiments.data.datasets import load_dataset

    monkeypatch.setenv("KACS_DATA_DIR", str(shared_data_dir))
    X, y = load_dataset("asn", shared_data_dir)
    est = KACSRegressor(n_iter=500, N=100, P_hash=0.8).fit(X, y)
    model = tmp_path / "asn.kacs"
    est.save(model)
    code, _, err = run_kacs(capsys, "explain", model, "--data", "asn", "-o", tmp_path / "by_name")
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "by_name" / "shares.csv"),
                                  est.explain(X).shares().reset_index(drop=True), check_dtype=False)
    code, out, err = run_kacs(capsys, "predict", model, "ASN")
    assert code == 0, err
    assert np.array_equal(np.array(out.splitlines()[:len(y)], dtype=float), est.predict(X))
    # A file called like a dataset in the working directory is read as that file.
    monkeypatch.chdir(tmp_path)
    np.savetxt(tmp_path / "asn", X[:7], delimiter=",", fmt="%.17g")
    code, out, err = run_kacs(capsys, "predict", model, "asn")
    assert code == 0, err
    assert np.array_equal(np.array(out.splitlines(), dtype=float), est.predict(X[:7]))
    code, _, err = run_kacs(capsys, "explain", model, "--data", "nope", "-o", tmp_path / "none")
    assert code == 2 and "use a dataset name (asn" in err and not (tmp_path / "none").exists()
