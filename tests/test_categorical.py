"""Categorical inputs (docs/algorithm.md section 12): each category placed on its input's axis
by its mean target, in the estimators, `kacs fit`/`kacs predict` and a campaign's methods."""

import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from cli_support import run_kacs as kacs
from kacs_cli import KACSRegressor, XCSFRegressor, load
from kacs_cli.engine import Hyperparameters, train_run
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.execution import placed_categories
from kacs_cli.experiments.data.protocols import make_split
from kacs_cli.experiments.data.registry import get_registry
from kacs_cli.scaling import MAX_CATEGORIES, CategoryMap, InputTransform

SMALL = dict(n_iter=1500, P_hash=0.8)


def assert_one_line_error(err: str):
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
# Effect of each colour on the target: ranked by mean target blue < red < green < pink < teal.
EFFECT = {"red": 1.0, "green": 2.0, "blue": -1.0, "teal": 4.0, "pink": 3.0}


def colour_frame(rows=300, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(list(EFFECT), size=rows)
    a = rng.uniform(size=rows)
    y = a + np.array([EFFECT[c] for c in colour]) + rng.normal(0.0, 0.05, rows)
    return pd.DataFrame({"a": a, "colour": colour}), y


# ----------------------------------------------------------------------------- the map


def test_categories_are_ranked_by_mean_target_on_a_hand_example():
    cells = np.array(["b", "a", "c", "a", "b", "1", 1.0, 2, " c ", "d"], dtype=object)
    y = np.array([5.0, 1.0, 3.0, 1.0, 5.0, 0.0, 0.0, 10.0, 3.0, 3.0])
    # means: 1 -> 0 ("1" and 1.0 are one category), a -> 1, c -> 3 (" c " stripped), d -> 3,
    # b -> 5, 2 -> 10; c and d tie at 3 and go in text order.
    m = CategoryMap.fit((0,), [cells], y, ["'x'"])
    assert m.categories == [[1.0, "a", "c", "d", "b", 2.0]]
    assert m.counts[0].tolist() == [2, 2, 2, 1, 2, 1]
    K = 6
    placed = m.positions([np.array(["a", "b", 2, "1.0", "d"], dtype=object)])[:, 0]
    np.testing.assert_array_equal(placed, [(1 + 0.5) / K, (4 + 0.5) / K, (5 + 0.5) / K, 0.5 / K, (3 + 0.5) / K])


def test_a_tie_in_mean_is_broken_by_the_category_numbers_before_texts():
    m = CategoryMap.fit((2,), [np.array(["z", 7, "b", 3], dtype=object)], np.zeros(4), ["c"])
    assert m.categories == [[3.0, 7.0, "b", "z"]] and m.columns == (2,)


def test_an_unseen_category_and_a_missing_cell_are_missing_inputs():
    cells = np.array(["a", "a", "b", "b", "b", "c", "c", "c"], dtype=object)
    y = np.array([0.0, 0.0, 5.0, 5.0, 5.0, 1.0, 1.0, 1.0])  # rank a, c, b
    m = CategoryMap.fit((0,), [cells], y, ["c"])
    query = np.array(["never seen", 42, None, np.nan, "", " ", "nan", "b", "None"], dtype=object)
    placed = m.positions([query])[:, 0]
    assert np.isnan(placed[:7]).all() and placed[7] == 2.5 / 3
    assert np.isnan(placed[8])  # the text "None" is no category of the train rows either
    assert np.isnan(m.positions([np.array([np.nan, 7.0, 1.0])])[:, 0]).all()


def test_missing_cells_take_no_part_in_the_ranking():
    # Counted, the missing rows' targets (100) would be nobody's; a and b keep their own means.
    cells = np.array(["b", None, "a", np.nan, "b", "a", ""], dtype=object)
    y = np.array([2.0, 100.0, 1.0, 100.0, 2.0, 1.0, 100.0])
    m = CategoryMap.fit((0,), [cells], y, ["'x'"])
    assert m.categories == [["a", "b"]] and m.counts[0].tolist() == [2, 2]
    placed = m.positions([cells])[:, 0]
    np.testing.assert_array_equal(placed, [0.75, np.nan, 0.25, np.nan, 0.75, 0.25, np.nan])


def test_the_estimator_reads_an_unseen_category_as_a_missing_input():
    X, y = colour_frame()
    X.loc[::7, "colour"] = None  # missing cells in training too
    est = KACSRegressor(**SMALL, categorical_features=["colour"]).fit(X, y)
    assert sum(len(c) for c in est.categories_.categories) == 5
    assert np.isnan(est.scale_inputs(X)[::7, 1]).all() and not np.isnan(est.scale_inputs(X)[1::7, 1]).any()
    unseen = X.head(20).assign(colour="ultraviolet")
    assert np.isnan(est.scale_inputs(unseen)[:, 1]).all()
    predicted = est.predict(unseen)
    assert np.isfinite(predicted).all()
    np.testing.assert_array_equal(predicted, est.predict(unseen.assign(colour=np.nan)))
    # the engine's own reading of a missing input (docs/algorithm.md section 12), fed the NaN directly
    scaled = est.scale_inputs(X.head(20))
    scaled[:, 1] = np.nan
    np.testing.assert_array_equal(predicted, est.inverse_scale_target(est.model_.predict(scaled)))


def test_an_empty_or_too_many_categories_are_refused():
    with pytest.raises(UserError, match="categorical column 'x' holds no value \\(missing on every row\\)"):
        CategoryMap.fit((0,), [np.array([None, np.nan, ""], dtype=object)], np.zeros(3), ["'x'"])
    many = np.arange(MAX_CATEGORIES + 1, dtype=float)
    with pytest.raises(UserError, match=f"{MAX_CATEGORIES + 1} distinct values, more than the {MAX_CATEGORIES}"):
        CategoryMap.fit((0,), [many], many, ["'x'"])


# ----------------------------------------------------------------------------- the estimators


@pytest.mark.parametrize("cls", [KACSRegressor, XCSFRegressor])
def test_without_categorical_inputs_the_model_is_bit_identical(cls, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(200, 3))
    y = X[:, 0] - X[:, 1] ** 2
    reference = cls(**SMALL).fit(X, y)
    frame = pd.DataFrame(X, columns=["p", "q", "r"])
    for spec, data in (([], X), (np.zeros(0, dtype=int), X), ("from_dtype", X), ("from_dtype", frame),
                       ([False, False, False], X)):
        est = cls(**SMALL, categorical_features=spec).fit(data, y)
        assert est.categories_ is None and est.is_categorical_ is None
        np.testing.assert_array_equal(est.predict(data), reference.predict(X))
        assert est.rules_.equals(reference.rules_)
    reference.save(tmp_path / "m.kacs")
    meta = json.loads(zipfile.ZipFile(tmp_path / "m.kacs").read("metadata.json"))
    assert meta["format_version"] == 1 and "categories" not in meta["scaling"]
    assert "categorical" not in meta["hyperparameters"]


def test_a_step_over_shuffled_codes_is_learned_better_as_categories():
    # Five categories whose codes 0..4 are in no order of their effect: the target zigzags
    # over the codes, while ranked by mean target it rises steadily.
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 5, 600)
    x = rng.uniform(size=600)
    effect = np.array([0.6, -1.0, 1.0, -0.5, 0.1])
    y = effect[codes] + 0.5 * x
    X = np.column_stack([codes, x]).astype(float)
    errors = []
    for spec in (None, [0]):
        est = KACSRegressor(n_iter=4000, P_hash=0.8, random_state=1, categorical_features=spec).fit(X[:400], y[:400])
        errors.append(float(np.mean(np.abs(est.predict(X[400:]) - y[400:]))))
    codes_mae, categories_mae = errors
    assert categories_mae < 0.5 * codes_mae, errors


def test_string_categories_in_a_dataframe_by_name_index_mask_and_dtype():
    X, y = colour_frame()
    by_name = KACSRegressor(**SMALL, categorical_features=["colour"]).fit(X, y)
    assert by_name.categories_.categories == [["blue", "red", "green", "pink", "teal"]]
    assert by_name.is_categorical_.tolist() == [False, True]
    assert by_name.model_.params.categorical
    for spec, data in (([1], X), ([False, True], X), (np.array([1]), X),
                       ("from_dtype", X.astype({"colour": "category"}))):
        est = KACSRegressor(**SMALL, categorical_features=spec).fit(data, y)
        np.testing.assert_array_equal(est.predict(data), by_name.predict(X))
    # the placed column is (k + 0.5) / 5 by rank, and the input transform passes it through
    quantile = KACSRegressor(**SMALL, input_transform="quantile", categorical_features=["colour"]).fit(X, y)
    rank = {c: k for k, c in enumerate(["blue", "red", "green", "pink", "teal"])}
    expected = (X["colour"].map(rank).to_numpy() + 0.5) / 5
    np.testing.assert_array_equal(quantile.scale_inputs(X)[:, 1], expected)
    np.testing.assert_array_equal(by_name.scale_inputs(X)[:, 1], expected)


def test_numeric_codes_and_their_text_are_the_same_categories():
    X, y = colour_frame()
    code = {c: k for k, c in enumerate(EFFECT)}
    numeric = X.assign(colour=X["colour"].map(code).astype(float)).to_numpy()
    text = X.assign(colour=X["colour"].map(code).astype(str)).to_numpy(dtype=object)
    a = KACSRegressor(**SMALL, categorical_features=[1]).fit(numeric, y)
    b = KACSRegressor(**SMALL, categorical_features=[1]).fit(text, y)
    np.testing.assert_array_equal(a.predict(numeric), b.predict(text))
    np.testing.assert_array_equal(a.predict(text), a.predict(numeric))


def test_partial_fit_keeps_the_first_batch_categories():
    X, y = colour_frame(400)
    first = X.iloc[:200][X.iloc[:200]["colour"] != "teal"]
    est = KACSRegressor(**SMALL, categorical_features=["colour"])
    est.partial_fit(first, y[first.index])
    kept = est.categories_.state()
    assert "teal" not in kept["categories"][0]
    est.partial_fit(X.iloc[200:], y[200:])
    assert est.categories_.state() == kept
    # teal, unseen by the first batch, stays a missing input
    teal = X.iloc[:5].assign(colour="teal")
    assert np.isnan(est.scale_inputs(teal)[:, 1]).all()


@pytest.mark.parametrize("transform", ["minmax", "quantile"])
def test_a_saved_model_predicts_identically_after_load(transform, tmp_path):
    X, y = colour_frame()
    est = KACSRegressor(**SMALL, input_transform=transform, categorical_features=["colour"]).fit(X, y)
    query = pd.concat([X.head(30), X.head(3).assign(colour="ultraviolet")])
    est.save(tmp_path / "m.kacs")
    back = load(tmp_path / "m.kacs")
    np.testing.assert_array_equal(back.predict(query), est.predict(query))
    assert back.categories_.state() == est.categories_.state() and back.is_categorical_.tolist() == [False, True]
    meta = json.loads(zipfile.ZipFile(tmp_path / "m.kacs").read("metadata.json"))
    assert meta["format_version"] == 3 and meta["hyperparameters"]["categorical"] is True
    assert meta["scaling"]["categories"]["categories"] == [["blue", "red", "green", "pink", "teal"]]


def test_a_damaged_categories_entry_is_a_corrupt_file(tmp_path):
    X, y = colour_frame()
    KACSRegressor(**SMALL, categorical_features=["colour"]).fit(X, y).save(tmp_path / "m.kacs")
    with zipfile.ZipFile(tmp_path / "m.kacs") as z:
        entries = {name: z.read(name) for name in z.namelist()}
    meta = json.loads(entries["metadata.json"])
    meta["scaling"]["categories"]["columns"] = [5]
    entries["metadata.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(tmp_path / "bad.kacs", "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    with pytest.raises(UserError, match="corrupt kacs model file, categories entry malformed"):
        load(tmp_path / "bad.kacs")


@pytest.mark.parametrize("spec, data, message", [
    ([True, False, True], "array", "a boolean mask of 3 values but X has 2 columns"),
    ([2], "array", "column index 2 is out of range; X has 2 columns, indices 0 to 1"),
    ([-1], "array", "column index -1 is out of range"),
    (["colour"], "array", "names columns \\('colour'\\) but X has no column names"),
    (["color"], "frame", "'color' is not a column of X; its columns are a, colour"),
    ("colour", "frame", "The 'categorical_features' parameter of KACSRegressor must be a str among "
                        "\\{'from_dtype'\\}, an array-like or None. Got 'colour' instead."),
    ([1.5], "frame", "must hold booleans \\(a mask\\), whole numbers"),
])
def test_bad_categorical_features_are_one_clear_line(spec, data, message):
    X, y = colour_frame(40)
    rows = X.to_numpy(dtype=object) if data == "array" else X
    with pytest.raises(UserError, match=message):
        KACSRegressor(**SMALL, categorical_features=spec).fit(rows, y)


def test_a_categorical_campaign_run_is_what_the_estimator_learns_on_its_split():
    """The campaign's placement (execution.placed_categories) and the estimator's are one: a
    run of the protocol with categorical inputs equals an estimator fitted on its raw train rows."""
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, 300).astype(float)
    X = np.column_stack([rng.uniform(size=300), codes])
    y = X[:, 0] + np.array([0.5, -1.0, 2.0, 0.0])[codes.astype(int)]
    split = make_split(X, y, "main", split_seed=0)
    params = Hyperparameters(P_hash=0.8, input_transform="quantile", categorical=True)
    X_train, X_test = placed_categories(X, y, split, (1,))
    transform = InputTransform.fit("quantile", X_train, keep=(1,))
    result = train_run("kacs", transform.apply(X_train), split.y_train, transform.apply(X_test), split.y_test,
                       params=params, iterations=2000, eval_every=2000, seed=0)
    est = KACSRegressor(n_iter=2000, P_hash=0.8, input_transform="quantile", random_state=0,
                        categorical_features=[1]).fit(X[split.train_index], y[split.train_index])
    np.testing.assert_array_equal(est.scale_inputs(X[split.test_index]), transform.apply(X_test))
    scaled = est.scale_target(est.predict(X[split.test_index]))
    assert abs(float(np.mean(np.abs(scaled - split.y_test))) - result.final["test_mae"]) < 1e-12
    assert est.n_rules_ == result.final["rules"]


# ----------------------------------------------------------------------------- campaigns


def test_the_registry_declares_the_coded_columns_categorical():
    registry = get_registry()
    assert registry["diamonds"].categorical == ("cut", "color", "clarity")
    assert registry["diamonds"].categorical_columns == (1, 2, 3)
    assert registry["carseats"].categorical == ("ShelveLoc", "Urban", "US")
    assert registry["carseats"].categorical_columns == (5, 8, 9)
    # one-hot indicators are numbers; the article's datasets have no categories
    assert registry["wage"].categorical == ("education", "jobclass", "health", "health_ins")
    assert registry["ccpp"].categorical == () and registry["fair"].categorical == ()


def test_a_method_says_categorical_once_and_only_when_true():
    config = resolve_config({"experiment": "t", "benchmarks": ["carseats"], "iterations": 100,
                             "methods": {"kacs": None, "kacs-cat": {"method": "kacs", "categorical": True}}})
    settings = config.to_dict()["cells"][0]["hyperparameters"]
    assert settings["kacs-cat"]["categorical"] is True and "categorical" not in settings["kacs"]
    with pytest.raises(UserError, match="methods.kacs-cat.categorical: must be true or false"):
        resolve_config({"experiment": "t", "benchmarks": ["carseats"], "iterations": 100,
                        "methods": {"kacs-cat": {"method": "kacs", "categorical": "yes"}}})


# ----------------------------------------------------------------------------- the command line


def write_colour_csv(path, rows=300, header=True):
    X, y = colour_frame(rows)
    lines = (["a,colour,price"] if header else []) + [
        f"{float(a)!r},{c},{float(t)!r}" for a, c, t in zip(X["a"], X["colour"], y)]
    path.write_text("\n".join(lines) + "\n")
    return X, y


def test_kacs_fit_reads_text_categories_and_predict_applies_the_saved_ones(capsys, tmp_path):
    X, y = write_colour_csv(tmp_path / "d.csv")
    model = tmp_path / "m.kacs"
    code, out, err = kacs(capsys, "fit", str(tmp_path / "d.csv"), "--out", str(model), "-n", "1500",
                          "--categorical", "colour")
    assert code == 0, err
    assert "categorical inputs colour (5 categories)" in out
    est = load(model)
    reference = KACSRegressor(n_iter=1500, P_hash=0.8, categorical_features=["colour"]).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), reference.predict(X))
    # by index, the same model
    code, _, err = kacs(capsys, "fit", str(tmp_path / "d.csv"), "--out", str(tmp_path / "i.kacs"), "-n", "1500",
                        "--categorical", "1")
    assert code == 0, err
    np.testing.assert_array_equal(load(tmp_path / "i.kacs").predict(X), reference.predict(X))
    # predict: with the header and target, and without both
    code, out, err = kacs(capsys, "predict", str(model), str(tmp_path / "d.csv"))
    assert code == 0, err
    np.testing.assert_array_equal([float(v) for v in out.split()], reference.predict(X))
    bare = tmp_path / "x.csv"
    bare.write_text("".join(f"{float(a)!r},{c}\n" for a, c in zip(X["a"], X["colour"])) + "0.5,ultraviolet\n")
    code, out, err = kacs(capsys, "predict", str(model), str(bare))
    assert code == 0, err
    query = pd.concat([X, pd.DataFrame({"a": [0.5], "colour": ["ultraviolet"]})], ignore_index=True)
    np.testing.assert_array_equal([float(v) for v in out.split()], reference.predict(query))


def test_kacs_fit_reads_a_missing_categorical_cell_as_a_missing_input(capsys, tmp_path):
    X, y = colour_frame(200)
    X.loc[::9, "colour"] = None
    cells = ["" if c is None else c for c in X["colour"]]
    cells[1] = "NA" if cells[1] else cells[1]
    X.loc[1, "colour"] = None
    lines = ["a,colour,price"] + [f"{float(a)!r},{c},{float(t)!r}" for a, c, t in zip(X["a"], cells, y)]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    code, _, err = kacs(capsys, "fit", str(tmp_path / "d.csv"), "--out", str(tmp_path / "m.kacs"), "-n", "1000",
                        "--categorical", "colour")
    assert code == 0, err
    reference = KACSRegressor(n_iter=1000, P_hash=0.8, categorical_features=["colour"]).fit(X, y)
    np.testing.assert_array_equal(load(tmp_path / "m.kacs").predict(X), reference.predict(X))


@pytest.mark.parametrize("option, message", [
    (None, "d.csv:1:2: non-numeric value 'red' (a header row? the CSV must have none); every cell must be a number "
           "(decimal point '.', comma-separated) or missing (empty, NA, nan or ?); if column 1 holds categories, pass "
           "--categorical 1"),
    ("5", "--categorical 5: "),
    ("colr", "--categorical colr: no input column of "),
    ("price", "(the target, which must be a number)"),
    ("2", "is the target (the last column)"),
    ("a,,b", "give column names or 0-based column indices separated by commas"),
])
def test_kacs_fit_refuses_bad_categorical_input_in_one_line(capsys, tmp_path, option, message):
    X, y = colour_frame(30)
    lines = [f"{float(a)!r},{c},{float(t)!r}" for a, c, t in zip(X["a"], X["colour"], y)]
    lines[0] = f"{float(X['a'][0])!r},red,{float(y[0])!r}"
    header = option is not None
    (tmp_path / "d.csv").write_text("\n".join((["a,colour,price"] if header else ["0.1,red,1.0"]) + lines) + "\n")
    args = ["fit", str(tmp_path / "d.csv"), "--out", str(tmp_path / "m.kacs"), "-n", "100"]
    code, _, err = kacs(capsys, *args, *([] if option is None else ["--categorical", option]))
    assert code == 2
    assert_one_line_error(err)
    assert message in err
    assert not (tmp_path / "m.kacs").exists()


def test_kacs_fit_refuses_a_column_of_too_many_categories(capsys, tmp_path):
    rows = [f"{k},{k * 0.5}" for k in range(MAX_CATEGORIES + 1)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    code, _, err = kacs(capsys, "fit", str(tmp_path / "d.csv"), "--out", str(tmp_path / "m.kacs"), "-n", "100",
                        "--categorical", "0")
    assert code == 2
    assert_one_line_error(err)
    assert f"has {MAX_CATEGORIES + 1} distinct values, more than the {MAX_CATEGORIES}" in err


def test_text_in_an_input_not_declared_categorical_says_how_to_declare_it():
    X, y = colour_frame(40)
    with pytest.raises(UserError, match="X: column 'colour' holds the non-numeric value '[a-z]+'; every value must be "
                                        "a number; if it holds categories, declare it in categorical_features "
                                        "\\(e.g. categorical_features=\\['colour'\\]\\)"):
        KACSRegressor(**SMALL).fit(X, y)
    with pytest.raises(UserError, match="X: column 1 holds the non-numeric value .*categorical_features=\\[1\\]"):
        KACSRegressor(**SMALL).fit(X.to_numpy(dtype=object), y)


def test_compact_and_explain_read_text_categories_as_the_model_was_trained(capsys, tmp_path):
    X, y = write_colour_csv(tmp_path / "d.csv", rows=200)
    model = tmp_path / "m.kacs"
    code, _, err = kacs(capsys, "fit", str(tmp_path / "d.csv"), "--out", str(model), "-n", "1000",
                        "--categorical", "colour")
    assert code == 0, err
    code, out, err = kacs(capsys, "compact", str(model), "--data", str(tmp_path / "d.csv"), "--out",
                          str(tmp_path / "c.kacs"))
    assert code == 0, err
    compacted = load(tmp_path / "c.kacs")
    assert compacted.categories_.state() == load(model).categories_.state()
    expected = load(model).compact(X, y)
    np.testing.assert_array_equal(compacted.predict(X), expected.predict(X))
    code, _, err = kacs(capsys, "explain", str(model), "--data", str(tmp_path / "d.csv"), "--out",
                        str(tmp_path / "explained"))
    assert code == 0, err
    assert (tmp_path / "explained" / "shares.csv").is_file()
