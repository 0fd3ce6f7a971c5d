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
from kacs_cli.experiments.campaign.config import recorded_config, resolve_config
from kacs_cli.experiments.campaign.execution import categorical_columns, load_cell_rows, placed_categories
from kacs_cli.experiments.campaign.results import ResolvedConfig
from kacs_cli.experiments.data.datasets import load_dataset, merge_nominal
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


def test_the_registry_declares_the_one_hot_groups_categorical_and_codes_not():
    registry = get_registry()
    # binary and ordered labels are numbers in their order
    assert registry["diamonds"].categorical == () and registry["carseats"].categorical == ()
    assert registry["ccpp"].categorical == () and registry["fair"].categorical == ()
    wage = registry["wage"]
    assert wage.categorical == ("maritl", "race")
    assert wage.indicators("maritl") == (2, 3, 4, 5) and wage.indicators("race") == (6, 7, 8)
    assert wage.merged_columns == ["year", "age", "maritl", "race", "education", "jobclass", "health",
                                   "health_ins", "wage"]
    assert wage.categorical_columns == (2, 3)
    assert registry["saratoga"].categorical_columns == (9, 10, 11)
    assert registry["auto"].categorical_columns == (6,) and registry["cps1988"].categorical_columns == (4,)


def test_merging_a_one_hot_group_on_a_hand_example():
    info = get_registry()["auto"]  # origin: levels 1, 2, 3 in columns 6 (origin=2) and 7 (origin=3)
    X = np.array([[1, 2, 3, 4, 5, 6, 0, 0], [1, 2, 3, 4, 5, 6, 1, 0], [9, 8, 7, 6, 5, 4, 0, 1]], dtype=float)
    merged = merge_nominal(info, X)
    np.testing.assert_array_equal(merged, [[1, 2, 3, 4, 5, 6, 0], [1, 2, 3, 4, 5, 6, 1], [9, 8, 7, 6, 5, 4, 2]])
    for bad in ([1, 1], [0, 0.5]):
        X[1, 6:] = bad
        with pytest.raises(UserError, match="data row 2 sets the indicator columns of origin to"):
            merge_nominal(info, X)


@pytest.mark.parametrize("name", ["auto", "saratoga", "wage", "cps1988"])
def test_the_merged_codes_reproduce_the_files_indicators(name, suite_data_dir):
    info = get_registry()[name]
    X, _ = load_dataset(name, suite_data_dir)
    merged = merge_nominal(info, X)
    assert merged.shape == (info.rows, len(info.merged_columns) - 1)
    indicator_columns = set()
    for column, j in zip(info.categorical, info.categorical_columns):
        block = X[:, list(info.indicators(column))]
        indicator_columns |= set(info.indicators(column))
        assert np.isin(block, (0.0, 1.0)).all() and (block.sum(axis=1) <= 1).all()
        # code 0 where no indicator is set (the reference), k where indicator k is
        np.testing.assert_array_equal(merged[:, j] == 0, block.sum(axis=1) == 0)
        for k in range(block.shape[1]):
            np.testing.assert_array_equal(merged[:, j] == k + 1, block[:, k] == 1)
    # every other column as in the file, in its order
    others = [j for j in range(X.shape[1]) if j not in indicator_columns]
    kept = [j for j in range(merged.shape[1]) if j not in info.categorical_columns]
    np.testing.assert_array_equal(merged[:, kept], X[:, others])
    if name == "auto":  # ISLR's Auto: 245 American, 68 European, 79 Japanese cars
        assert np.bincount(merged[:, 6].astype(int)).tolist() == [245, 68, 79]


def _categorical_config(benchmarks, methods=None):
    return resolve_config({"experiment": "t", "benchmarks": benchmarks, "iterations": 100,
                           "methods": methods or {"kacs": None, "kacs-cat": {"method": "kacs", "categorical": True}}})


def test_a_method_says_categorical_once_and_only_when_true():
    config = _categorical_config([{"name": "auto", "nominal": "codes"}])
    settings = config.to_dict()["cells"][0]["hyperparameters"]
    assert settings["kacs-cat"]["categorical"] is True and "categorical" not in settings["kacs"]
    with pytest.raises(UserError, match="methods.kacs-cat.categorical: must be true or false"):
        _categorical_config([{"name": "auto", "nominal": "codes"}], {"kacs-cat": {"method": "kacs", "categorical": "yes"}})


def test_nominal_codes_is_a_cell_of_its_own_recorded_only_where_set():
    config = _categorical_config([{"name": "wage", "nominal": "codes"}, {"name": "wage", "methods": ["kacs"]}, "f1"],
                                 {"kacs": None})
    assert [c.label for c in config.cells] == ["wage-codes", "wage", "f1"]
    assert [c.data.categorical_columns for c in config.cells] == [(2, 3), (), ()]
    assert config.cells[0].data.n == 8 and config.cells[1].data.n == 13
    written = config.to_dict()["cells"]
    assert written[0]["nominal"] == "codes" and "nominal" not in written[1] and "nominal" not in written[2]
    # alone it still says codes: the label `wage` is the file as stored, in every config
    assert [c.label for c in _categorical_config([{"name": "wage", "nominal": "codes"}]).cells] == ["wage-codes"]
    again = recorded_config(ResolvedConfig.parse(config.to_yaml()), "config.yaml")
    assert [c.data for c in again.cells] == [c.data for c in config.cells]


@pytest.mark.parametrize("benchmark, message", [
    ("carseats", "benchmarks\\[0\\]: method kacs-cat has categorical: true, but cell carseats has no categorical "
                 "inputs"),
    ("f1", "cell f1 has no categorical inputs"),
    ({"name": "diamonds", "nominal": "codes"}, "benchmarks\\[0\\].nominal: reads a registry data set's one-hot "
                                               "inputs as codes; 'diamonds' has none \\(those that do: auto, saratoga, "
                                               "wage, cps1988\\)"),
    ({"name": "wage", "nominal": "codes", "weights": 0}, "is not combined with weights"),
    ({"name": "wage", "nominal": "one-hot"}, "benchmarks\\[0\\].nominal"),
])
def test_categorical_without_categorical_inputs_is_refused_in_one_line(benchmark, message):
    with pytest.raises(UserError, match=message) as caught:
        _categorical_config([benchmark])
    assert "\n" not in str(caught.value)


def test_a_campaign_run_on_a_codes_cell_places_the_merged_columns(suite_data_dir):
    """load_cell_rows merges the groups, and a categorical run trains on the placed columns."""
    config = _categorical_config([{"name": "auto", "nominal": "codes"}])
    cell = config.cells[0]
    X, y, weight = load_cell_rows(cell, suite_data_dir)
    file_X, _ = load_dataset("auto", suite_data_dir)
    np.testing.assert_array_equal(X, merge_nominal(get_registry()["auto"], file_X))
    assert weight is None and categorical_columns(cell) == (6,)
    split = make_split(X, y, "main", split_seed=0)
    X_train, _ = placed_categories(X, y, split, (6,))
    means = [y[split.train_index][X[split.train_index, 6] == k].mean() for k in range(3)]
    ranks = np.argsort(np.argsort(means))  # American cars lowest mpg, then European, Japanese
    expected = (ranks[X[split.train_index, 6].astype(int)] + 0.5) / 3
    np.testing.assert_array_equal(X_train[:, 6], expected)


def test_gbr_takes_categorical_as_categorical_features_on_the_codes():
    from kacs_cli import baselines
    from sklearn.ensemble import HistGradientBoostingRegressor

    config = _categorical_config([{"name": "auto", "nominal": "codes"}],
                                 {"gbr": None, "gbr-cat": {"method": "gbr", "categorical": True}})
    spec = config.cells[0].params["gbr-cat"]
    assert spec.categorical and spec.as_dict()["categorical"] is True
    assert not config.cells[0].params["gbr"].categorical and "categorical" not in config.cells[0].params["gbr"].as_dict()
    again = recorded_config(ResolvedConfig.parse(config.to_yaml()), "config.yaml")
    assert again.cells[0].params["gbr-cat"].categorical
    assert baselines.build(spec, 3, (1,)).get_params()["categorical_features"] == [1]
    assert baselines.build(config.cells[0].params["gbr"], 3, (1,)).get_params()["categorical_features"] == "from_dtype"
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(size=200), rng.integers(0, 5, 200).astype(float)])
    y = X[:, 0] + np.array([0.0, 3.0, -1.0, 2.0, 1.0])[X[:, 1].astype(int)]
    fitted = baselines.fit_predict(spec, 3, X[:150], y[:150], X[150:], categorical=(1,))
    direct = HistGradientBoostingRegressor(categorical_features=[1], random_state=3).fit(X[:150], y[:150])
    np.testing.assert_array_equal(fitted.y_test, direct.predict(X[150:]))
    with pytest.raises(UserError, match="categorical: true needs an estimator that takes categorical_features"):
        _categorical_config(["f1"], {"rf-cat": {"method": "rf", "categorical": True}})
    with pytest.raises(UserError, match="categorical_features is set by the runner"):
        _categorical_config([{"name": "auto", "nominal": "codes"}],
                            {"g": {"method": "gbr", "categorical": True, "categorical_features": [6]}})


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


@pytest.mark.slow
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
