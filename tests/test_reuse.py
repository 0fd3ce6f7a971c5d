"""`reuse:` copies identical runs of finished campaigns instead of training them again: the
copies must equal what training would have given, bit for bit, and only identical runs
(same data, learner, hyperparameters, protocol, iterations, seeds) may be copied."""

import pandas as pd
import pytest

from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import curvestore
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.results import RUN_COLUMNS

from test_runner import campaign

SOURCE = {
    "experiment": "source",
    "methods": ["xcsf", "kacs"],
    "hyperparameters": {"N": 200},
    "benchmarks": [{"name": "f1", "n": 2, "samples": 120}],
    "protocol": {"name": "main", "runs": 2},
    "iterations": 600,
    "eval_every": 300,
}


def target(reuse=None, **changes):
    """Another experiment: the source's KACS under a new label and cell label, plus a variant
    (other N) and a cell the source does not have."""
    raw = {
        "experiment": "target",
        "methods": {"kacs-small": {"method": "kacs", "N": 100}, "kacs": None},
        "hyperparameters": {"N": 200},
        "benchmarks": [{"name": "f1", "n": 2, "samples": 120, "label": "renamed"},
                       {"name": "f2", "n": 2, "samples": 120}],
        "protocol": {"name": "main", "runs": 3},
        "iterations": 600,
        "eval_every": 300,
        **changes,
    }
    if reuse is not None:
        raw["reuse"] = reuse
    return resolve_config(raw)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    out = tmp_path_factory.mktemp("reuse") / "source"
    assert campaign(resolve_config(dict(SOURCE)), out, jobs=1)[0].ran == 4
    return out


def test_copied_runs_equal_trained_ones_bit_for_bit(source, tmp_path):
    reused, text = campaign(target([str(source)]), tmp_path / "reused", jobs=1)
    # kacs on the shared cell, runs 0 and 1 (the source has two runs, the target three)
    assert reused.reused == 2 and reused.ran == 12 - 2
    assert "2 run(s) copied" in text
    trained, _ = campaign(target(), tmp_path / "trained", jobs=1)
    assert trained.reused == 0 and trained.ran == 12
    numbers = [c for c in RUN_COLUMNS if c != "seconds"]
    a = pd.read_csv(tmp_path / "reused" / "runs.csv")
    b = pd.read_csv(tmp_path / "trained" / "runs.csv")
    pd.testing.assert_frame_equal(a[numbers], b[numbers])

    copied = a[(a["benchmark"] == "renamed") & (a["method"] == "kacs") & (a["run"] < 2)]
    original = pd.read_csv(source / "runs.csv").query("method == 'kacs'")
    assert list(copied["experiment"].unique()) == ["target"]
    # the copies keep the source's measured seconds
    assert copied["seconds"].tolist() == original["seconds"].tolist()
    curves = curvestore.collect(tmp_path / "reused")
    source_curves = {(m, r): v for (cell, m, r), v in curvestore.collect(source).items()}
    for run in (0, 1):
        pd.testing.assert_frame_equal(curves[("renamed", "kacs", run)], source_curves[("kacs", run)])


def test_only_identical_runs_are_copied(source, tmp_path):
    """Another iteration count, protocol or data: nothing matches."""
    for changes in ({"iterations": 900}, {"protocol": {"name": "main", "runs": 3, "train_fraction": 0.8}},
                    {"benchmarks": [{"name": "f1", "n": 2, "samples": 121}]}):
        result, _ = campaign(target([str(source)], **changes), tmp_path / str(len(list(tmp_path.iterdir()))),
                             jobs=1, methods=["kacs"])
        assert result.reused == 0


def test_a_changed_reuse_list_is_the_same_config(source, tmp_path):
    out = tmp_path / "out"
    first, _ = campaign(target([str(source)]), out, jobs=1, benchmarks=["renamed"], methods=["kacs"])
    assert (first.reused, first.ran) == (2, 1)
    again, text = campaign(target(), out, jobs=1, benchmarks=["renamed"], methods=["kacs"])
    assert (again.already, again.ran) == (3, 0) and "Nothing to do" in text


def test_a_missing_reuse_folder_is_refused(tmp_path):
    with pytest.raises(UserError) as info:
        target([str(tmp_path / "nowhere")])
    message = str(info.value)
    assert "reuse[0]" in message and "not a results folder" in message and "\n" not in message


def test_two_labels_of_one_identical_run_are_both_copied(source, tmp_path):
    config = target([str(source)], methods={"kacs": None, "kacs-same": {"method": "kacs"}},
                    benchmarks=[{"name": "f1", "n": 2, "samples": 120, "label": "renamed"}],
                    protocol={"name": "main", "runs": 2})
    result, _ = campaign(config, tmp_path / "out", jobs=1)
    assert (result.reused, result.ran) == (4, 0)
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    same = runs.set_index(["method", "run"])["test_mae"]
    assert [same[("kacs", r)] for r in (0, 1)] == [same[("kacs-same", r)] for r in (0, 1)]
