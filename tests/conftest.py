import os
from pathlib import Path

import pytest

# One BLAS and OpenMP thread in the test session and the processes it starts, unless the
# caller chose a number: the tests fit small problems, where a second thread beside a busy core
# spins instead of helping (the reason kacs_cli.engine.train.one_blas_thread gives for the
# package's own steps after training). Set before numpy and scikit-learn load their libraries,
# which read it once; a test that needs more threads raises them with threadpoolctl, as
# test_refine does.
for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real datasets: KACS_TEST_DATA_DIR, or optionally a mirror in ../shared/datasets beside
    the checkout (as on the project's machines); the tests that need them skip otherwise."""
    env = os.environ.get("KACS_TEST_DATA_DIR")
    path = Path(env) if env else SHARED_DATASETS
    if not (path / "asn.csv").exists():
        pytest.skip(f"real datasets not found at {path} (set KACS_TEST_DATA_DIR or place ../shared beside the checkout)")
    return path


def pytest_collection_modifyitems(config, items):
    """Every test that asks for the real datasets (directly or through another fixture) is
    marked `data`, so `-m "not data"` selects what runs without them; no list to keep."""
    for item in items:
        if "shared_data_dir" in item.fixturenames or "suite_data_dir" in item.fixturenames:
            item.add_marker(pytest.mark.data)


SUITE_DATASETS = Path(__file__).resolve().parents[1].parent / "suitedata"


@pytest.fixture(scope="session")
def suite_data_dir() -> Path:
    """The suite's datasets as `kacs data fetch suite` builds them: KACS_TEST_SUITE_DIR, or a
    mirror in ../suitedata beside the checkout; the tests that need them skip otherwise."""
    env = os.environ.get("KACS_TEST_SUITE_DIR")
    path = Path(env) if env else SUITE_DATASETS
    if not (path / "wage.csv").exists():
        pytest.skip(f"suite datasets not found at {path} (set KACS_TEST_SUITE_DIR or place ../suitedata beside the "
                    f"checkout)")
    return path
