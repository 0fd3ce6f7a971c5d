"""Dataset registry, CSV loading and its error messages, import and fetch."""

import hashlib
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kacs_cli.errors import UserError
from kacs_cli.experiments.data import registry as dataset_registry
from kacs_cli.experiments.data.fetch import fetch_datasets, import_datasets
from kacs_cli.experiments.data.registry import get_registry, resolve_data_dir
from kacs_cli.experiments.data.datasets import (dataset_status, is_real_world, load_csv, load_dataset, missing_datasets,
                                           n_inputs)

from http_support import serve

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The article's ten datasets by role: its main experiment's four real-world sets, the two
# further real-world sets of the SupRB comparison, and the four published functions.
REAL_WORLD = ("asn", "ccpp", "cs", "eec")
SUPRB_EXTRA = ("pppts", "pt")
PUBLISHED = ("f1", "f2", "f3", "f4")

# From the dataset registry's sources (kacs_cli/experiments/data/registry.yaml).
EXPECTED = {
    "asn": (1503, 5, "c391746d25bdd137b40e48712d3e4f11b1d67399f59a1c5e92d7b495dcfe3172"),
    "ccpp": (9568, 4, "33abb36fec8aea6b0d8fe48f460e8694e40816345c7aa746a4fff4e3185f50db"),
    "cs": (1030, 8, "12633c0d3dfac876a7dd783560367a6374ec5998e5386f627e182c5aa1a85b49"),
    "eec": (768, 8, "dedb09e1825c30a798d0f9cc70539e0b7726a3cdb3bc7a62e32322cdcf797cea"),
    "pppts": (45730, 9, "0c7b3bcaa0bab1cd5c4f2fe66a69408296c2b00a768d961f7c42e4af9459d44b"),
    "pt": (5875, 18, "85ed7cf006ebeb341b775f036d0845a4a5ddbeef38b2911ee22bd2e53e40f7a4"),
    "f1": (1000, 10, "21a184ecbd214373d3f4c105bbf1d185b40282b798b369882c32de8f6712e3a0"),
    "f2": (1000, 10, "e5739d2d7dfb73fed86e6c7253946f258ade81e29f11d375e88cee7b7592c804"),
    "f3": (1000, 10, "c7f8c03cefabb92dfa312d9c549043a154877133f1559fbefd471dfac5ce776d"),
    "f4": (1000, 10, "cc6ae510a9a30dd7df13440f4d74c3fa6329afed13fd2cd3870efe81963b5273"),
}


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("KACS_DATA_DIR", raising=False)
    monkeypatch.delenv("KACS_FETCH_BASE_URL", raising=False)


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode())
    return path


def good_rows(count=12, columns=3):
    return "".join(",".join(str(r * columns + c + 0.5) for c in range(columns)) + "\n" for r in range(count))


# ----------------------------------------------------------------------------- registry


def test_registry_matches_the_shared_readme():
    registry = get_registry()
    # the article's ten first; the suite beyond the article follows (tests/test_suite_datasets.py)
    assert list(registry)[:10] == ["asn", "ccpp", "cs", "eec", "pppts", "pt", "f1", "f2", "f3", "f4"]
    assert all(registry[name].group == "suite" for name in list(registry)[10:])
    assert [name for name in list(registry)[:10] if registry[name].kind == "real"] == [*REAL_WORLD, *SUPRB_EXTRA]
    for name, (rows, n, sha) in EXPECTED.items():
        info = registry[name]
        assert (info.name, info.file, info.rows, info.n_inputs, info.sha256) == (name, f"{name}.csv", rows, n, sha)
        assert len(info.columns) == n + 1
        assert info.kind == ("published" if name in PUBLISHED else "real")
    assert registry["ccpp"].columns[-1] == "net_energy_output"
    assert registry["eec"].columns[-1] == "cooling_load"
    assert registry["pppts"].columns[-1] == "RMSD" and registry["pt"].columns[-1] == "motor_UPDRS"
    assert registry["pt"].columns[:3] == ["test_time", "total_UPDRS", "Jitter(%)"]
    assert [registry[n].line_endings for n in SUPRB_EXTRA] == ["LF", "LF"]
    assert registry["asn"].source == "https://archive.ics.uci.edu/dataset/291/airfoil+self+noise"
    assert registry["f3"].download["url"].endswith("YNU-NakataLab/KACS/main/dataset/f3_cross_10dim_1000.csv")


def test_registry_ships_as_package_data():
    """A wheel (not only an editable checkout) must carry the registry: it lies inside the
    package and one of pyproject's package-data patterns covers it."""
    import tomllib

    package_dir = Path(dataset_registry.__file__).resolve().parent
    relative = dataset_registry.REGISTRY_PATH.relative_to(package_dir)
    pyproject = tomllib.loads((package_dir.parents[2] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["kacs_cli.experiments.data"]
    assert any(relative.match(pattern) for pattern in patterns), (relative, patterns)


def test_resolve_data_dir_precedence(monkeypatch, tmp_path):
    assert resolve_data_dir() == Path(dataset_registry.__file__).resolve().parents[3] / "datasets"
    monkeypatch.setenv("KACS_DATA_DIR", str(tmp_path / "env"))
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert resolve_data_dir(str(tmp_path / "arg")) == tmp_path / "arg"


def test_kinds_and_inputs(tmp_path):
    assert [is_real_world(n) for n in ("asn", "CCPP", "cs", "eec", "pppts", "PT")] == [True] * 6
    assert [is_real_world(n) for n in ("f1", "f2", "F3", "f4")] == [False] * 4
    assert is_real_world(tmp_path / "mine.csv") and is_real_world("data/mine.csv")
    assert n_inputs("ccpp") == 4 and n_inputs("f2") == 10
    user = write(tmp_path / "mine.csv", good_rows(12, 4))
    assert n_inputs(str(user)) == 3
    with pytest.raises(UserError) as info:
        is_real_world("airfoil")
    assert str(info.value) == (
        f"unknown dataset 'airfoil'; use one of {', '.join(get_registry())} "
        "or the path of a CSV file (ending in .csv)"
    )
    assert str(info.value).startswith("unknown dataset 'airfoil'; use one of asn, ccpp, cs, eec, pppts, pt, f1, f2, f3, f4, ")


# ----------------------------------------------------------------------------- real files


@pytest.mark.parametrize("name", list(EXPECTED))
def test_shared_files_load_with_documented_shapes(shared_data_dir, name):
    rows, n, _ = EXPECTED[name]
    X, y = load_dataset(name, shared_data_dir)
    assert X.shape == (rows, n) and y.shape == (rows,)
    assert X.dtype == np.float64 and X.flags["C_CONTIGUOUS"] and y.flags["C_CONTIGUOUS"]
    assert np.all(np.isfinite(X)) and np.all(np.isfinite(y))


def test_shared_checksums_verify(shared_data_dir):
    status = [row for row in dataset_status(shared_data_dir) if row[0] in EXPECTED]  # the article's ten
    assert [(n, s) for n, s, _ in status] == [(n, "present") for n in EXPECTED]
    for name, _, path in status:
        assert hashlib.sha256(path.read_bytes()).hexdigest() == EXPECTED[name][2]
    assert missing_datasets(list(EXPECTED), shared_data_dir) == []


def test_values_are_exact_and_crlf_is_handled(shared_data_dir):
    raw = (shared_data_dir / "eec.csv").read_bytes()
    assert raw.count(b"\r\n") == 768
    X, y = load_dataset("EEC", shared_data_dir)
    assert list(X[0]) == [0.98, 514.5, 294.0, 110.25, 7.0, 2.0, 0.0, 0.0] and y[0] == 21.33
    # Every value equals Python's own parse of its text (no precision lost by the fast parser).
    for name in ("f1", "ccpp"):
        text = (shared_data_dir / f"{name}.csv").read_text()
        exact = np.array([[float(t) for t in line.split(",")] for line in text.splitlines()])
        X, y = load_dataset(name, shared_data_dir)
        np.testing.assert_array_equal(np.column_stack([X, y]), exact)


def test_user_csv_path_loads(shared_data_dir):
    X, y = load_dataset(str(shared_data_dir / "asn.csv"))
    assert X.shape == (1503, 5)
    assert y[0] == 126.201


# ----------------------------------------------------------------------------- bad data


def message(call) -> str:
    with pytest.raises(UserError) as info:
        call()
    text = str(info.value)
    assert "\n" not in text
    return text


def test_missing_registry_file(tmp_path):
    text = message(lambda: load_dataset("eec", tmp_path))
    assert text == (
        f"dataset eec not found: looked for {tmp_path / 'eec.csv'} (data directory from --data-dir); "
        "get it with `kacs data fetch eec` (needs internet) or copy it from a local mirror with "
        "`kacs data import DIR`"
    )


def test_missing_file_reports_env_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KACS_DATA_DIR", str(tmp_path))
    text = message(lambda: load_dataset("f2"))
    assert f"looked for {tmp_path / 'f2.csv'} (data directory from $KACS_DATA_DIR)" in text


def test_missing_user_csv(tmp_path):
    path = tmp_path / "nope.csv"
    text = message(lambda: load_dataset(str(path)))
    assert text.startswith(f"data file not found: {path} (looked at {path})")


def test_checksum_mismatch(shared_data_dir, tmp_path):
    original = (shared_data_dir / "eec.csv").read_bytes()
    corrupt = original.replace(b"21.33", b"21.34", 1)
    (tmp_path / "eec.csv").write_bytes(corrupt)
    found = hashlib.sha256(corrupt).hexdigest()
    text = message(lambda: load_dataset("eec", tmp_path))
    assert text == (
        f"{tmp_path / 'eec.csv'}: checksum mismatch for dataset eec: expected SHA-256 "
        f"{EXPECTED['eec'][2]}, found {found}; the file is corrupt or a different version, "
        "replace it with `kacs data fetch eec` or `kacs data import DIR`"
    )
    X, y = load_dataset("eec", tmp_path, verify=False)
    assert y[0] == 21.34
    assert missing_datasets(["eec", "f1"], tmp_path) == ["eec", "f1"]
    assert [s for n, s, _ in dataset_status(tmp_path) if n == "eec"] == ["checksum mismatch"]


def test_wrong_shape_of_registry_file(tmp_path, monkeypatch):
    # A file that passes the (unverified) checksum step but has the wrong number of rows.
    write(tmp_path / "asn.csv", good_rows(12, 6))
    text = message(lambda: load_dataset("asn", tmp_path, verify=False))
    assert "dataset asn has 12 rows x 6 columns, the registry says 1503 x 6" in text


def test_non_numeric_cell(tmp_path):
    lines = good_rows(12).splitlines()
    lines[2] = "7.5,abc,9"
    path = write(tmp_path / "bad.csv", "\n".join(lines) + "\n")
    assert message(lambda: load_csv(path)) == (
        f"{path}:3:2: non-numeric value 'abc'; every cell must be a number (decimal point '.', comma-separated) "
        "or missing (empty, NA, nan or ?)"
    )


def test_header_row_is_named(tmp_path):
    path = write(tmp_path / "head.csv", "a,b,target\n" + good_rows(12))
    text = message(lambda: load_csv(path))
    assert text.startswith(f"{path}:1:1: non-numeric value 'a' (a header row? the CSV must have none)")


@pytest.mark.parametrize("cell", ["", " ", "NA", "na", "nan", "NaN", "?", '""'])
def test_a_missing_input_cell_reads_as_nan(tmp_path, cell):
    lines = good_rows(12).splitlines()
    lines[3] = f"1,{cell},3"
    path = write(tmp_path / "gap.csv", "\n".join(lines) + "\n")
    X, y = load_csv(path)
    assert np.isnan(X[3, 1]) and np.count_nonzero(np.isnan(X)) == 1
    assert X[3, 0] == 1.0 and y[3] == 3.0


def test_missing_target_value_in_crlf_file_with_blank_line(tmp_path):
    # Data rows are counted without blank lines: line 6 is data row 5.
    lines = good_rows(12).splitlines()
    lines.insert(1, "")
    lines[5] = "1,2,"
    lines[8] = "1,2,?"
    path = write(tmp_path / "gap.csv", "\r\n".join(lines) + "\r\n")
    assert message(lambda: load_csv(path)) == (
        f"{path}: the target (last column) is missing (NaN or empty) on 2 of 12 rows; a target must be "
        "known to learn from: drop those rows (the first is data row 5)")


def test_an_input_column_missing_on_every_row_is_refused(tmp_path):
    rows = [line.split(",") for line in good_rows(12).splitlines()]
    path = write(tmp_path / "empty.csv", "".join(f"{a},NA,{c}\n" for a, _, c in rows))
    assert message(lambda: load_csv(path)) == (
        f"{path}: input column 2 holds no value (missing on every row), so there is no range to "
        "scale it by; drop it")


@pytest.mark.parametrize("row, found", [("1,2,3,4", 4), ("1,2", 2)])
def test_ragged_row(tmp_path, row, found):
    lines = good_rows(12).splitlines()
    lines[4] = row
    path = write(tmp_path / "ragged.csv", "\n".join(lines) + "\n")
    assert message(lambda: load_csv(path)) == (
        f"{path}:5: expected 3 columns (as on line 1), found {found}; every row needs the same "
        "number of comma-separated values"
    )


@pytest.mark.parametrize("cell", ["inf", "-Infinity", "-nan"])
def test_non_finite_value(tmp_path, cell):
    lines = good_rows(12).splitlines()
    lines[6] = f"1,{cell},3"
    path = write(tmp_path / "nan.csv", "\n".join(lines) + "\n")
    assert message(lambda: load_csv(path)) == (
        f"{path}:7:2: non-finite value {cell!r}; every cell must be a finite number or missing "
        "(empty, NA, nan or ?), replace it or drop the row")


def test_too_few_columns(tmp_path):
    path = write(tmp_path / "one.csv", "".join(f"{i}\n" for i in range(20)))
    assert message(lambda: load_csv(path)) == (
        f"{path}: found 1 column; a dataset needs at least one input column and the target last, "
        "separated by commas"
    )


def test_too_few_rows(tmp_path):
    path = write(tmp_path / "short.csv", good_rows(9))
    assert message(lambda: load_csv(path)) == f"{path}: found 9 data rows; a dataset needs at least 10"


def test_constant_target(tmp_path):
    path = write(tmp_path / "flat.csv", "".join(f"{i},{i * 2},4.5\n" for i in range(12)))
    assert message(lambda: load_csv(path)) == (
        f"{path}: the target (last column) is constant (4.5) on all 12 rows; a regression target "
        "must vary, check that the target is the last column"
    )


def test_empty_file(tmp_path):
    path = write(tmp_path / "empty.csv", "")
    assert "the file holds no data" in message(lambda: load_csv(path))


def test_lenient_forms_still_load(tmp_path):
    # Spaces around cells, a quoted number and a byte-order mark are harmless.
    text = "\ufeff" + ' 1, "2" ,3\n' + good_rows(11)
    X, y = load_csv(write(tmp_path / "ok.csv", text))
    assert X.shape == (12, 2) and list(X[0]) == [1.0, 2.0] and y[0] == 3.0


def test_unknown_name_lists_known_ones():
    text = message(lambda: load_dataset("concrete"))
    assert "unknown dataset 'concrete'; use one of asn, ccpp, cs, eec, pppts, pt, f1, f2, f3, f4" in text


# ----------------------------------------------------------------------------- import


def test_import_copies_and_verifies(shared_data_dir, tmp_path):
    dest = tmp_path / "data"
    imported = import_datasets(shared_data_dir, dest)
    assert imported == list(EXPECTED)
    for name in EXPECTED:
        assert (dest / f"{name}.csv").read_bytes() == (shared_data_dir / f"{name}.csv").read_bytes()
    assert not [p for p in dest.iterdir() if p.suffix != ".csv"]  # no temp files left behind
    assert missing_datasets(list(EXPECTED), dest) == []


def test_import_refuses_a_corrupt_file_and_takes_the_rest(shared_data_dir, tmp_path):
    src = tmp_path / "mirror"
    src.mkdir()
    shutil.copy(shared_data_dir / "cs.csv", src / "cs.csv")
    # The authors' file name is accepted too.
    shutil.copy(shared_data_dir / "f1.csv", src / "f1_rastrigin_10dim_1000.csv")
    bad = (shared_data_dir / "asn.csv").read_bytes()[:-10]
    (src / "asn.csv").write_bytes(bad)
    dest = tmp_path / "data"
    text = message(lambda: import_datasets(src, dest))
    assert text == (
        f"refused 1 file(s) from {src} whose checksum does not match the registry: asn.csv "
        f"(SHA-256 {hashlib.sha256(bad).hexdigest()}, expected {EXPECTED['asn'][2]}); imported cs, f1; "
        "get correct copies with `kacs data fetch`"
    )
    assert sorted(p.name for p in dest.iterdir()) == ["cs.csv", "f1.csv"]


def test_import_from_empty_or_missing_dir(tmp_path):
    assert "no dataset files found in" in message(lambda: import_datasets(tmp_path, tmp_path / "d"))
    assert "is not a directory" in message(lambda: import_datasets(tmp_path / "nope", tmp_path / "d"))


# ----------------------------------------------------------------------------- fetch


TINY_REGISTRY = """
datasets:
  tiny:
    title: made-up test table
    kind: real
    file: tiny.csv
    rows: 12
    n_inputs: 3
    columns: [a, b, c, target]
    sha256: {sha}
    line_endings: CRLF
    source: test fixture
    download:
      url: https://example.invalid/static/tiny.zip
      format: zip
      member: tiny.dat
      reader: whitespace
  book:
    kind: real
    file: book.csv
    rows: 12
    n_inputs: 1
    columns: [x, y]
    sha256: {sha}
    source: test fixture
    download:
      url: https://example.invalid/static/book.zip
      format: zip
      member: book.xlsx
      reader: xlsx
      header: true
"""


@pytest.fixture
def tiny_registry(tmp_path, monkeypatch):
    """A test-only registry: `tiny` (a zipped whitespace table) and `book` (an xlsx)."""
    expected = (FIXTURES / "tiny.csv").read_bytes()
    path = tmp_path / "registry.yaml"
    path.write_text(TINY_REGISTRY.format(sha=hashlib.sha256(expected).hexdigest()))
    monkeypatch.setattr(dataset_registry, "_REGISTRY", dataset_registry.load_registry(path))
    site = tmp_path / "site"
    site.mkdir()
    with zipfile.ZipFile(site / "tiny.zip", "w") as archive:
        archive.write(FIXTURES / "tiny.dat", "tiny/tiny.dat")
    with zipfile.ZipFile(site / "book.zip", "w") as archive:
        archive.writestr("book.xlsx", b"not really a workbook")
    return site, expected


def test_fetch_converts_a_zipped_table_to_the_registry_form(tiny_registry, tmp_path):
    site, expected = tiny_registry
    dest = tmp_path / "data"
    with serve(site) as url:
        assert fetch_datasets(["tiny"], dest, base_urls={"tiny": f"{url}/tiny.zip"}) == ["tiny"]
        # Present and verified: skipped unless forced.
        assert fetch_datasets(["tiny"], dest, base_urls={"tiny": f"{url}/tiny.zip"}) == []
        assert fetch_datasets(["tiny"], dest, base_urls={"tiny": f"{url}/tiny.zip"}, force=True) == ["tiny"]
    assert (dest / "tiny.csv").read_bytes() == expected
    assert sorted(p.name for p in dest.iterdir()) == ["tiny.csv"]
    X, y = load_dataset("tiny", dest)
    assert X.shape == (12, 3) and y[3] == 0.0015


def test_fetch_refuses_a_checksum_mismatch_and_writes_nothing(tiny_registry, tmp_path):
    site, _ = tiny_registry
    altered = (FIXTURES / "tiny.dat").read_text().replace("126.201", "126.202")
    with zipfile.ZipFile(site / "other.zip", "w") as archive:
        archive.writestr("tiny.dat", altered)
    dest = tmp_path / "data"
    with serve(site) as url:
        text = message(lambda: fetch_datasets(["tiny"], dest, base_urls={"tiny": f"{url}/other.zip"}))
    assert text.startswith(f"could not fetch 1 dataset(s): tiny: the file built from {url}/other.zip has SHA-256 ")
    assert "refused (the source changed or the download is damaged)" in text
    assert text.endswith("without internet, copy the CSVs from a mirror and run `kacs data import DIR`")
    assert not dest.exists() or list(dest.iterdir()) == []


def test_fetch_names_a_missing_reader_package(tiny_registry, tmp_path, monkeypatch):
    site, _ = tiny_registry
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # import openpyxl -> ImportError
    with serve(site) as url:
        monkeypatch.setenv("KACS_FETCH_BASE_URL", url + "/")
        text = message(lambda: fetch_datasets(["book"], tmp_path / "data"))
    assert "book: converting dataset book needs the Python package openpyxl to read .xlsx workbooks; " \
           "install it (pip install openpyxl)" in text


def test_fetch_unreachable_server(tiny_registry, tmp_path):
    with serve(tmp_path) as url:
        pass  # the server is gone again: its port refuses connections
    text = message(lambda: fetch_datasets(["tiny"], tmp_path / "data", base_urls={"tiny": f"{url}/tiny.zip"}, timeout=5))
    assert text.startswith(f"could not fetch 1 dataset(s): tiny: download from {url}/tiny.zip failed (")
    assert "`kacs data import DIR`" in text


def test_fetch_rebuilds_asn_and_f1_byte_for_byte(shared_data_dir, tmp_path, monkeypatch):
    # Serve what UCI and GitHub serve: ASN as a tab-separated .dat inside a zip, f1 raw.
    site = tmp_path / "site"
    site.mkdir()
    dat = (shared_data_dir / "asn.csv").read_text().replace("\r\n", "\n").replace(",", "\t")
    with zipfile.ZipFile(site / "airfoil+self+noise.zip", "w") as archive:
        archive.writestr("airfoil_self_noise.dat", dat)
    shutil.copy(shared_data_dir / "f1.csv", site / "f1_rastrigin_10dim_1000.csv")
    dest = tmp_path / "data"
    with serve(site) as url:
        monkeypatch.setenv("KACS_FETCH_BASE_URL", url)
        assert fetch_datasets(["asn", "F1"], dest) == ["asn", "f1"]
        text = message(lambda: fetch_datasets(["cs"], dest))
    assert f"download from {url}/concrete+compressive+strength.zip failed (HTTP 404 File not found)" in text
    for name in ("asn", "f1"):
        assert (dest / f"{name}.csv").read_bytes() == (shared_data_dir / f"{name}.csv").read_bytes()


def test_fetch_unknown_name():
    assert "unknown dataset 'xyz'" in message(lambda: fetch_datasets(["xyz"]))


# ----------------------------------------------------------------------------- SupRB datasets

# The UCI files' own column names (from the archives' header rows).
CASP_HEADER = "RMSD,F1,F2,F3,F4,F5,F6,F7,F8,F9"
UPDRS_HEADER = ("subject#,age,sex,test_time,motor_UPDRS,total_UPDRS,Jitter(%),Jitter(Abs),Jitter:RAP,"
                "Jitter:PPQ5,Jitter:DDP,Shimmer,Shimmer(dB),Shimmer:APQ3,Shimmer:APQ5,Shimmer:APQ11,"
                "Shimmer:DDA,NHR,HNR,RPDE,DFA,PPE")


def _uci_text(values: list[float], salt: int) -> list[str]:
    # The archive must not simply hold our own text: write every value in another exact form
    # (17 significant digits, or Python's float repr with its trailing ".0"), so the test
    # proves that conversion parses exactly and prints the shortest round-trip form.
    return [f"{v:.17g}" if (i + salt) % 2 else repr(float(v)) for i, v in enumerate(values)]


def _rows(path: Path) -> list[list[float]]:
    return [[float(t) for t in line.split(",")] for line in path.read_text().splitlines()]


def _suprb_site(shared: Path, site: Path) -> None:
    """UCI-like archives rebuilt from the mirror: CASP.csv (RMSD first) and
    parkinsons_updrs.data (subject#, age, sex, test_time, motor_UPDRS, total_UPDRS, ...)."""
    casp = [CASP_HEADER]
    for i, row in enumerate(_rows(shared / "pppts.csv")):
        casp.append(",".join(_uci_text([row[-1]] + row[:-1], i)))
    updrs = [UPDRS_HEADER]
    for i, row in enumerate(_rows(shared / "pt.csv")):
        uci = [i // 200 + 1, 60 + i % 20, i % 2, row[0], row[-1], row[1]] + row[2:-1]
        updrs.append(",".join(_uci_text(uci, i)))
    with zipfile.ZipFile(site / "physicochemical+properties+of+protein+tertiary+structure.zip", "w") as archive:
        archive.writestr("CASP.csv", "\n".join(casp) + "\n")
    with zipfile.ZipFile(site / "parkinsons+telemonitoring.zip", "w") as archive:
        archive.writestr("parkinsons_updrs.names", "not data\n")
        archive.writestr("parkinsons_updrs.data", "\r\n".join(updrs) + "\r\n")


@pytest.mark.slow
def test_fetch_rebuilds_pppts_and_pt_byte_for_byte(shared_data_dir, tmp_path, monkeypatch):
    for name in SUPRB_EXTRA:
        if not (shared_data_dir / f"{name}.csv").is_file():
            pytest.skip(f"{name}.csv not in the datasets mirror {shared_data_dir}")
    site = tmp_path / "site"
    site.mkdir()
    _suprb_site(shared_data_dir, site)
    # the archive really differs from the mirror's text, so the conversion has work to do
    member = zipfile.ZipFile(site / "parkinsons+telemonitoring.zip").read("parkinsons_updrs.data")
    assert member.split(b"\r\n")[1].split(b",")[3:5] != (shared_data_dir / "pt.csv").read_bytes().split(b",")[:2]
    dest = tmp_path / "data"
    with serve(site) as url:
        monkeypatch.setenv("KACS_FETCH_BASE_URL", url)
        assert fetch_datasets(["pppts", "pt"], dest) == ["pppts", "pt"]
    for name in SUPRB_EXTRA:
        built = (dest / f"{name}.csv").read_bytes()
        assert built == (shared_data_dir / f"{name}.csv").read_bytes()
        assert hashlib.sha256(built).hexdigest() == EXPECTED[name][2]
        assert b"\r" not in built
    X, y = load_dataset("pt", dest)
    assert X.shape == (5875, 18) and y[0] == 28.199 and X[0, 0] == 5.6431  # motor_UPDRS, test_time
    X, y = load_dataset("pppts", dest)
    assert X.shape == (45730, 9) and y[0] == 17.284 and X[0, 0] == 13558.3  # RMSD last, F1 first
