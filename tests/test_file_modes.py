"""Every file the project writes gets the user's umask, like any other tool's output."""

import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

from kacs_cli.cli import main

CONFIG = """experiment: modes
benchmarks: [{name: f3, n: 2, samples: 120}]
hyperparameters: {N: 60}
protocol: {runs: 2}
iterations: 300
eval_every: 100
"""


def kacs(*argv):
    try:
        main([str(a) for a in argv])
    except SystemExit as exc:
        assert exc.code in (0, None)


@pytest.fixture
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


@pytest.mark.slow
@pytest.mark.parametrize("umask", [0o022, 0o027], indirect=True)
def test_written_files_follow_the_umask(umask, tmp_path, shared_data_dir, capsys):
    cfg = tmp_path / "modes.yaml"
    cfg.write_text(CONFIG)
    results = tmp_path / "results"
    kacs("run", cfg, "--out", results, "--jobs", 1)
    kacs("report", results)  # tables, CSVs and figures into results/report

    data = tmp_path / "data.csv"
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (80, 2))
    np.savetxt(data, np.column_stack([X, X.sum(axis=1)]), delimiter=",")
    models = tmp_path / "models"
    models.mkdir()
    kacs("fit", data, "--out", models / "m.kacs", "--iterations", 200)
    kacs("plot-model", models / "m.kacs")
    kacs("explain", models / "m.kacs", "--data", data)
    kacs("fidelity", models / "m.kacs", "f4", "--data", data)

    source = tmp_path / "mirror"
    source.mkdir()
    shutil.copy(shared_data_dir / "eec.csv", source / "eec.csv")
    imported = tmp_path / "datasets"
    kacs("data", "import", source, "--data-dir", imported)
    capsys.readouterr()

    written = [p for root in (results, models, imported) for p in root.rglob("*")
               if p.is_file() and not p.name.startswith(".")]
    kinds = {p.suffix for p in written}
    assert {".csv", ".md", ".png", ".kacs", ".yaml", ".json"} <= kinds, kinds
    assert (imported / "eec.csv").is_file() and (models / "m.kacs").is_file()
    expected = 0o666 & ~umask
    wrong = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode))
             for p in written if stat.S_IMODE(p.stat().st_mode) != expected}
    assert not wrong, f"expected {oct(expected)}: {wrong}"


def test_atomic_mkstemp_keeps_the_umask_and_leaves_the_process_umask_alone(tmp_path):
    from kacs_cli import atomic

    old = os.umask(0o002)
    try:
        fd, path = atomic.mkstemp(dir=tmp_path, prefix=".x.", suffix=".tmp")
        os.close(fd)
        assert stat.S_IMODE(Path(path).stat().st_mode) == 0o664
        assert atomic.current_umask() == 0o002
        assert os.umask(0o002) == 0o002
    finally:
        os.umask(old)
