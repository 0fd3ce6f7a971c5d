"""A results folder records what produced its rows (engine.yaml: engine fingerprint, BLAS
kernels, commit), and rows of another engine never join it, nor are copied by `reuse:`,
unless --allow-engine-change."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cli_support import run_kacs
from kacs_cli.engine import cache
from kacs_cli.experiments.campaign import provenance
from kacs_cli.experiments.campaign.config import load_config
from kacs_cli.experiments.campaign.provenance import EngineRecord, engine_fingerprint, kernel_family
from kacs_cli.experiments.campaign.runner import run_campaign
from kacs_cli.errors import UserError

PACKAGE = Path(provenance.__file__).resolve().parents[2]

TINY = ("experiment: {name}\nbenchmarks: [{{name: f1, n: 2, samples: 120}}]\nhyperparameters: {{N: 100}}\n"
        "protocol: {{runs: 2}}\niterations: 300\neval_every: 150\n")
BLAS = {"user_api": "blas", "internal_api": "openblas", "prefix": "libopenblas", "version": "0.3.30",
        "architecture": "Haswell"}


def write_config(folder: Path, name: str, reuse: Path | None = None) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(TINY.format(name=name) + (f"reuse: [{reuse}]\n" if reuse else ""))
    return path


def contents(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def doctor(folder: Path, what: str) -> dict:
    """engine.yaml made to name another engine: another fingerprint or kernel architecture."""
    path = folder / "engine.yaml"
    record = yaml.safe_load(path.read_text())
    if what == "fingerprint":
        record["fingerprint"] = "0" * 64
    else:
        for kernel in record["kernels"]:
            if kernel["user_api"] == "blas":
                kernel["architecture"] = "Prescott"
    path.write_text(yaml.safe_dump(record, sort_keys=False))
    return record


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A tiny campaign of two runs per method, trained once; tests work on copies."""
    root = tmp_path_factory.mktemp("provenance")
    config = write_config(root, "tiny")
    assert run_campaign(load_config(config), root / "tiny", jobs=1).ran == 4
    return config, root / "tiny"


def copy_of(finished, tmp_path) -> Path:
    out = tmp_path / "tiny"
    shutil.copytree(finished[1], out)
    return out


# --------------------------------------------------------------------------- the record


def test_a_new_folder_records_the_running_engine(finished):
    record = provenance.read(finished[1])
    running = EngineRecord.current()
    assert record.fingerprint == engine_fingerprint() == running.fingerprint and record.same_engine(running)
    assert record.family and all(k["user_api"] for k in record.kernels)
    assert not any("num_threads" in k or "filepath" in k for k in record.kernels)
    assert record.commit == running.commit and record.others == ()


def test_the_fingerprint_follows_the_engine_and_baseline_sources_and_nothing_else(tmp_path):
    package = Path(provenance.__file__).resolve().parents[2]
    copy = tmp_path / "kacs_cli"
    for part in ("engine", "baselines", "reporting"):
        shutil.copytree(package / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    before = engine_fingerprint(copy)
    assert before == engine_fingerprint(package)

    for edited in (copy / "reporting" / "paper.py", copy / "engine" / "notes.txt"):
        edited.write_text(edited.read_text() + "# a comment\n" if edited.exists() else "notes\n")
        assert engine_fingerprint(copy) == before, edited
    (copy / "engine" / "__pycache__").mkdir()
    (copy / "engine" / "__pycache__" / "ga.cpython-311.pyc").write_bytes(b"bytecode")
    assert engine_fingerprint(copy) == before

    for edited in (copy / "engine" / "ga.py", copy / "baselines" / "xkan.py"):
        original = edited.read_text()
        edited.write_text(original.replace("\n", "\n\n", 1))
        assert engine_fingerprint(copy) != before, edited
        edited.write_text(original)
        assert engine_fingerprint(copy) == before


def test_the_plain_numba_switch_when_on_changes_the_fingerprint(monkeypatch):
    monkeypatch.delenv("KACS_PLAIN_NUMBA", raising=False)
    plain = engine_fingerprint()
    assert plain == cache.sources_digest(*(PACKAGE / name for name in ("engine", "baselines")))
    monkeypatch.setenv("KACS_PLAIN_NUMBA", " ")  # a value that does not turn it on
    assert engine_fingerprint() == plain
    monkeypatch.setenv("KACS_PLAIN_NUMBA", "1")
    on = engine_fingerprint()
    assert on != plain and len(on) == 64


def test_the_record_names_the_switches_that_were_on_and_the_kacs_engine(monkeypatch):
    monkeypatch.delenv("KACS_PLAIN_NUMBA", raising=False)
    default = EngineRecord.current()
    assert default.switches == () and "switches" not in default.as_dict()
    assert default.as_dict()["kacs_engine"] == default.kacs_engine == "sorted"
    assert default.as_dict()["xcsf_engine"] == default.xcsf_engine == "running-sum"
    assert default.as_dict()["refinement"] == default.refinement == "cells"
    monkeypatch.setenv("KACS_PLAIN_NUMBA", "nrt")
    plain = EngineRecord.current()
    assert plain.switches == ("KACS_PLAIN_NUMBA=nrt",)
    # Written out and read back; joining another engine's rows keeps this folder's switches.
    again = EngineRecord.of(plain.as_dict(), "engine.yaml")
    assert again == plain
    assert again.joined(default).switches == ("KACS_PLAIN_NUMBA=nrt",)


def test_a_record_without_the_kacs_engine_names_the_one_its_switches_say():
    """Records written before the KACS engine was named: the re-sorting engine, unless the
    switch that selected the sorted one was on."""
    old = {"fingerprint": "a" * 64, "kernels": [BLAS], "commit": "abc", "dirty": False}
    assert EngineRecord.of(old, "engine.yaml").kacs_engine == "re-sorting"
    switched = {**old, "switches": ["KACS_ENGINE=sorted"]}
    assert EngineRecord.of(switched, "engine.yaml").kacs_engine == "sorted"
    assert EngineRecord.of({**old, "kacs_engine": "sorted"}, "engine.yaml").kacs_engine == "sorted"


def test_a_record_without_the_xcsf_engine_names_the_full_sum_one():
    """Records written before the XCSF engine was named came from the engine that summed every
    slot's fitness after each update; a folder holding rows of both lists both."""
    old = {"fingerprint": "a" * 64, "kernels": [BLAS], "commit": "abc", "dirty": False}
    record = EngineRecord.of(old, "engine.yaml")
    assert record.xcsf_engine == "full-sum" and record.engines("xcsf") == ("full-sum",)
    now = EngineRecord.of({**old, "fingerprint": "b" * 64, "xcsf_engine": "running-sum"}, "engine.yaml")
    assert now.xcsf_engine == "running-sum"
    assert now.joined(record).engines("xcsf") == ("running-sum", "full-sum")
    assert now.joined(record).engines("kacs") == ("re-sorting",)


def test_plain_numba_is_one_engine_however_it_is_spelled(monkeypatch):
    """KACS_PLAIN_NUMBA's one kind, nrt, is also what "1" (every kind) means: one compilation,
    one fingerprint, named by the kind."""
    monkeypatch.delenv("KACS_PLAIN_NUMBA", raising=False)
    off = engine_fingerprint()
    prints = set()
    for value in ("nrt", "1", " nrt ", "nrt,nrt"):
        monkeypatch.setenv("KACS_PLAIN_NUMBA", value)
        prints.add(engine_fingerprint())
        assert provenance.engine_switches() == ("KACS_PLAIN_NUMBA=nrt",), value
    assert len(prints) == 1 and off not in prints


@pytest.mark.parametrize("value, unknown", [("nrt,intrinsics", "'intrinsics'"),
                                            ("specialisations", "'specialisations'"),
                                            ("0", "'0'")])
def test_an_unknown_kind_of_plain_numba_is_refused_in_one_line(monkeypatch, value, unknown):
    """A word that names no kind is refused, among them the hand optimisations the engine does
    not have (intrinsics, specialisations)."""
    monkeypatch.setenv("KACS_PLAIN_NUMBA", value)
    with pytest.raises(UserError, match=rf"^KACS_PLAIN_NUMBA={value}: unknown kind {unknown}; "
                                        r"set it to 1 \(every kind\) or to kinds among nrt "):
        cache.plain_kinds()


def test_the_cli_refuses_an_unknown_kind_of_plain_numba_in_one_line():
    """The engine reads the switch as it is imported, before any command runs."""
    env = {**os.environ, "KACS_PLAIN_NUMBA": "nrtt"}
    done = subprocess.run([sys.executable, "-c", "from kacs_cli.cli import main; main()", "--help"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: KACS_PLAIN_NUMBA=nrtt: unknown kind 'nrtt'")
    assert done.stderr.count("\n") == 1


def test_the_kernel_family_is_library_version_and_architecture_not_threads():
    threads = [{**BLAS, "num_threads": 1}, {"user_api": "openmp", "internal_api": "openmp", "prefix": "libgomp"}]
    assert kernel_family(threads) == kernel_family([{**BLAS, "num_threads": 64}]) == ("openblas 0.3.30 Haswell",)
    one = EngineRecord("a" * 64, (BLAS,))
    assert one.same_engine(EngineRecord("a" * 64, ({**BLAS, "num_threads": 8},), commit="other"))
    assert not one.same_engine(EngineRecord("a" * 64, ({**BLAS, "architecture": "SkylakeX"},)))
    assert not one.same_engine(EngineRecord("a" * 64, ({**BLAS, "version": "0.3.31"},)))
    assert not one.same_engine(EngineRecord("b" * 64, (BLAS,)))


# --------------------------------------------------------------------------- resuming


@pytest.mark.parametrize("what", ["fingerprint", "architecture"])
def test_resuming_a_folder_of_another_engine_is_refused_unless_allowed(finished, tmp_path, capsys, what):
    config, out = finished[0], copy_of(finished, tmp_path)
    recorded = doctor(out, what)
    before = contents(out)
    code, _, err = run_kacs(capsys, "run", config, "--out", out, "--runs", 3, "--jobs", 1)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{out} holds rows of another engine (engine {recorded['fingerprint'][:12]}" in err
    assert f"than this one (engine {engine_fingerprint()[:12]}" in err and "--allow-engine-change" in err
    if what == "architecture":
        assert "Prescott" in err
    assert contents(out) == before

    # nothing to add: the finished folder resumes whatever engine runs
    code, _, err = run_kacs(capsys, "run", config, "--out", out, "--jobs", 1)
    assert code == 0, err

    code, text, err = run_kacs(capsys, "run", config, "--out", out, "--runs", 3, "--allow-engine-change", "--jobs", 1)
    assert code == 0, err
    record = provenance.read(out)
    assert record.same_engine(EngineRecord.current())
    assert [o["fingerprint"] for o in record.others] == [recorded["fingerprint"]]
    # the folder now names both engines; resuming it with this one adds rows again
    code, _, err = run_kacs(capsys, "run", config, "--out", out, "--runs", 4, "--jobs", 1)
    assert code == 0, err
    assert len(provenance.read(out).others) == 1


def test_force_starts_over_with_the_running_engine(finished, tmp_path, capsys):
    config, out = finished[0], copy_of(finished, tmp_path)
    doctor(out, "fingerprint")
    code, _, err = run_kacs(capsys, "run", config, "--out", out, "--force", "--jobs", 1)
    assert code == 0, err
    record = provenance.read(out)
    assert record.same_engine(EngineRecord.current()) and record.others == ()


def test_a_folder_without_a_record_resumes_with_a_warning_and_stays_without(finished, tmp_path, capsys):
    config, out = finished[0], copy_of(finished, tmp_path)
    (out / "engine.yaml").unlink()
    code, text, err = run_kacs(capsys, "run", config, "--out", out, "--runs", 3, "--jobs", 1)
    assert code == 0, err
    assert f"warning: {out} has no engine.yaml (written before the record existed)" in " ".join(text.split())
    assert not (out / "engine.yaml").exists()


def test_an_unreadable_record_is_one_line(finished, tmp_path, capsys):
    config, out = finished[0], copy_of(finished, tmp_path)
    (out / "engine.yaml").write_text("fingerprint: [unclosed\n")
    code, _, err = run_kacs(capsys, "run", config, "--out", out, "--runs", 3, "--jobs", 1)
    assert code == 2 and err.count("\n") == 1 and f"cannot read {out / 'engine.yaml'}" in err


# --------------------------------------------------------------------------- reuse


@pytest.mark.parametrize("what", ["fingerprint", "architecture"])
def test_reusing_rows_of_another_engine_is_refused_unless_allowed(finished, tmp_path, capsys, what):
    source = copy_of(finished, tmp_path)
    recorded = doctor(source, what)
    before = contents(source)
    config = write_config(tmp_path, "target", reuse=source)
    out = tmp_path / "target"
    code, _, err = run_kacs(capsys, "run", config, "--out", out, "--jobs", 1)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"reuse: {source} holds rows of another engine (engine {recorded['fingerprint'][:12]}" in err
    assert "--allow-engine-change" in err
    assert not out.exists() and contents(source) == before

    code, text, err = run_kacs(capsys, "run", config, "--out", out, "--allow-engine-change", "--jobs", 1)
    assert code == 0, err
    assert "4 run(s) copied" in " ".join(text.split())
    record = provenance.read(out)
    assert record.same_engine(EngineRecord.current())
    assert [EngineRecord.of(o, "others").family for o in record.others] == [EngineRecord.of(recorded, "x").family]


def test_reusing_rows_of_the_same_engine_needs_no_flag(finished, tmp_path, capsys):
    config = write_config(tmp_path, "target", reuse=finished[1])
    code, text, err = run_kacs(capsys, "run", config, "--out", tmp_path / "target", "--jobs", 1)
    assert code == 0, err
    assert "4 run(s) copied" in " ".join(text.split())
    assert provenance.read(tmp_path / "target").others == ()


def test_a_record_without_the_refinement_names_the_scanning_one():
    """Records written before the refinement's kernel was named came from the kernel that
    scanned the outer rules; a folder holding rows of both lists both."""
    old = {"fingerprint": "a" * 64, "kernels": [BLAS], "commit": "abc", "dirty": False}
    record = EngineRecord.of(old, "engine.yaml")
    assert record.refinement == "scan" and record.engines("refinement") == ("scan",)
    now = EngineRecord.of({**old, "fingerprint": "b" * 64, "refinement": "cells"}, "engine.yaml")
    assert now.refinement == "cells" and EngineRecord.of(now.as_dict(), "engine.yaml") == now
    assert now.joined(record).engines("refinement") == ("cells", "scan")
