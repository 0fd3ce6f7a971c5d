"""`kacs data list | verify | import | fetch` against temporary data directories."""

import shutil
import subprocess
import sys

import pytest

from cli_support import run_kacs

from http_support import serve

NAMES = ["asn", "ccpp", "cs", "eec", "pppts", "pt", "f1", "f2", "f3", "f4"]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("KACS_DATA_DIR", raising=False)
    monkeypatch.delenv("KACS_FETCH_BASE_URL", raising=False)


kacs = run_kacs


def assert_one_line_error(err: str):
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err


def test_list_empty_dir(capsys, tmp_path):
    code, out, err = kacs(capsys, "data", "list", "--data-dir", str(tmp_path))
    assert code == 0 and err == ""
    for name in NAMES:
        assert any(line.split()[:1] == [name] and "missing" in line for line in out.splitlines()), name
    assert "1503 x 6" in out and "9568 x 5" in out and "1000 x 11" in out
    assert "published" in out and "real" in out
    assert f"data directory: {tmp_path} (from --data-dir)" in out
    assert "kacs data fetch asn ccpp cs eec pppts pt f1 f2 f3 f4" in out


def test_import_verify_corrupt_cycle(capsys, shared_data_dir, tmp_path):
    data = tmp_path / "data"
    code, out, err = kacs(capsys, "data", "import", str(shared_data_dir), "--data-dir", str(data))
    assert code == 0, err
    assert "imported 10 dataset(s): asn ccpp cs eec pppts pt f1 f2 f3 f4" in out
    assert sorted(p.name for p in data.iterdir()) == sorted(f"{n}.csv" for n in NAMES)

    code, out, err = kacs(capsys, "data", "verify", "--data-dir", str(data))
    assert code == 0 and err == ""
    assert out.count("ok ") == 10 and "all 10 datasets verified" in out

    # Corrupt one byte of the copied ccpp.csv: verify names it and exits 2.
    raw = bytearray((data / "ccpp.csv").read_bytes())
    raw[100] = ord("7") if raw[100] != ord("7") else ord("8")
    (data / "ccpp.csv").write_bytes(bytes(raw))
    code, out, err = kacs(capsys, "data", "verify", "--data-dir", str(data))
    assert code == 2
    assert_one_line_error(err)
    assert err.strip() == (
        f"error: 1 dataset(s) not usable in {data}: ccpp (checksum mismatch); get them with "
        "`kacs data fetch ccpp` or `kacs data import DIR`"
    )
    assert f"checksum mismatch  ccpp  {data / 'ccpp.csv'}" in out

    code, out, _ = kacs(capsys, "data", "list", "--data-dir", str(data))
    assert code == 0
    assert any(line.split()[:1] == ["ccpp"] and "checksum mismatch" in line for line in out.splitlines())

    # Only the named datasets are checked.
    code, out, err = kacs(capsys, "data", "verify", "asn", "F1", "--data-dir", str(data))
    assert code == 0 and "all 2 datasets verified" in out

    # A missing file: exit 2, named with the command that gets it.
    (data / "f3.csv").unlink()
    code, _, err = kacs(capsys, "data", "verify", "--data-dir", str(data))
    assert code == 2
    assert_one_line_error(err)
    assert "ccpp (checksum mismatch), f3 (missing); get them with `kacs data fetch ccpp f3`" in err


def test_verify_uses_env_data_dir(capsys, shared_data_dir, monkeypatch):
    monkeypatch.setenv("KACS_DATA_DIR", str(shared_data_dir))
    code, out, _ = kacs(capsys, "data", "verify")
    assert code == 0 and f"data directory: {shared_data_dir} (from $KACS_DATA_DIR)" in out


def test_import_bad_inputs(capsys, shared_data_dir, tmp_path):
    code, _, err = kacs(capsys, "data", "import", str(tmp_path / "nowhere"), "--data-dir", str(tmp_path / "d"))
    assert code == 2
    assert_one_line_error(err)
    assert f"import source {tmp_path / 'nowhere'} is not a directory" in err

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "eec.csv").write_bytes((shared_data_dir / "eec.csv").read_bytes().replace(b"\r\n", b"\n"))
    code, _, err = kacs(capsys, "data", "import", str(mirror), "--data-dir", str(tmp_path / "d"))
    assert code == 2
    assert_one_line_error(err)
    assert "refused 1 file(s) from" in err and "eec.csv (SHA-256 " in err


def test_unknown_dataset_names(capsys, tmp_path):
    code, _, err = kacs(capsys, "data", "verify", "airfoil", "--data-dir", str(tmp_path))
    assert code == 2
    assert_one_line_error(err)
    assert "unknown dataset 'airfoil'; use one of asn, ccpp, cs, eec, pppts, pt, f1, f2, f3, f4" in err
    code, _, err = kacs(capsys, "data", "fetch", "mine.csv", "--data-dir", str(tmp_path))
    assert code == 2
    assert "`kacs data fetch` downloads registered datasets only, not 'mine.csv'" in err


def test_fetch_through_local_http_server(capsys, shared_data_dir, tmp_path, monkeypatch):
    # A mirror laid out like the upstream URLs' last segments: f2 and f4 as the authors
    # publish them; f3 served with damaged content.
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(shared_data_dir / "f2.csv", site / "f2_rosenbrock_10dim_1000.csv")
    shutil.copy(shared_data_dir / "f4.csv", site / "f4_styblinski_10dim_1000.csv")
    (site / "f3_cross_10dim_1000.csv").write_bytes((shared_data_dir / "f3.csv").read_bytes()[:-1])
    data = tmp_path / "data"
    with serve(site) as url:
        monkeypatch.setenv("KACS_FETCH_BASE_URL", url)
        code, out, err = kacs(capsys, "data", "fetch", "f2", "f4", "--data-dir", str(data))
        assert code == 0, err
        assert "fetched and verified: f2 f4" in out

        code, out, err = kacs(capsys, "data", "fetch", "f2", "--data-dir", str(data))
        assert code == 0 and "already present and verified: f2" in out

        code, out, err = kacs(capsys, "data", "fetch", "f3", "--data-dir", str(data))
        assert code == 2
        assert_one_line_error(err)
        assert err.startswith(f"error: could not fetch 1 dataset(s): f3: the file built from {url}/f3_cross_10dim_1000.csv")
        assert "refused" in err
    assert sorted(p.name for p in data.iterdir()) == ["f2.csv", "f4.csv"]
    code, out, _ = kacs(capsys, "data", "verify", "f2", "f4", "--data-dir", str(data))
    assert code == 0


@pytest.mark.slow
def test_subprocess_bad_input_prints_one_line_and_exits_2(tmp_path):
    script = "import sys; from kacs_cli.cli import main; main(sys.argv[1:])"
    proc = subprocess.run(
        [sys.executable, "-c", script, "data", "verify", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        f"error: 10 dataset(s) not usable in {tmp_path}: asn (missing), ccpp (missing), cs (missing), "
        "eec (missing), pppts (missing), pt (missing), f1 (missing), f2 (missing), f3 (missing), f4 (missing); get them with "
        "`kacs data fetch asn ccpp cs eec pppts pt f1 f2 f3 f4` or `kacs data import DIR`"
    )
    assert proc.stdout.count("missing") == 10


def test_fetch_of_an_unknown_name_lists_what_fetch_knows(capsys, tmp_path):
    code, _, err = kacs(capsys, "data", "fetch", "nosuch", "--data-dir", str(tmp_path))
    assert code == 2
    assert_one_line_error(err)
    assert "unknown dataset 'nosuch'" in err and ", ".join(NAMES) in err and "kacs data fetch" in err
    assert ".csv" not in err  # fetch cannot use a CSV path, so it does not suggest one
    assert list(tmp_path.iterdir()) == []
