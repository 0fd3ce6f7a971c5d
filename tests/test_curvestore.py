"""The compact curve aggregate (curves.csv.gz): content, determinism, and the runner keeping it."""

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from kacs_cli.experiments.campaign import curvestore, results
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.experiments.campaign.runner import run_campaign

TINY = {
    "experiment": "tiny",
    "hyperparameters": {"N": 200},
    "benchmarks": [{"name": "f3", "n": 2, "samples": 100}],
    "protocol": {"name": "main", "runs": 2},
    "iterations": 600,
    "eval_every": 200,
}


def _curve(path: Path, rows: list[list]) -> None:
    header = "iteration,train_mae,test_mae,rules,params,cover_rate,micro"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))


def _campaign(out: Path):
    return run_campaign(resolve_config(json.loads(json.dumps(TINY))), out, jobs=1)


def test_aggregate_holds_the_figure_columns_rounded_to_six_digits(tmp_path):
    _curve(tmp_path / "curves" / "f3-n2__kacs__1.csv", [[2000, 0.123456789, 0.5, 10, 20, 1 / 3, 99]])
    _curve(tmp_path / "curves" / "f3-n2__kacs__0.csv", [[2000, 1234567.89, 2e-7, 11, 22, 0.0, 99]])
    path = curvestore.update_aggregate(tmp_path, ["f3-n2__kacs__0", "f3-n2__kacs__1", "f3-n2__xcsf__0"])
    text = gzip.decompress(path.read_bytes()).decode()
    lines = text.splitlines()
    assert lines[0] == ("cell,method,run,iteration,train_mae,test_mae,train_mse,test_mse,rules,params,"
                        "cover_rate,cover_rate_inner,cover_rate_outer")
    # rows in the order of the keys given (runs.csv order); absent columns empty; micro dropped
    assert lines[1] == "f3-n2,kacs,0,2000,1.23457e+06,2e-07,,,11,22,0,,"
    assert lines[2] == "f3-n2,kacs,1,2000,0.123457,0.5,,,10,20,0.333333,,"
    assert len(lines) == 3  # the XCSF run has no curve anywhere: left out
    # the same curves give the same bytes: no time stamp or file name in the gzip header
    raw = path.read_bytes()
    assert raw[4:8] == b"\0\0\0\0" and raw[3] & 0x08 == 0
    assert curvestore.aggregate_bytes([]) != raw
    again = curvestore.update_aggregate(tmp_path, ["f3-n2__kacs__0", "f3-n2__kacs__1"])
    assert again.read_bytes() == raw


def test_per_run_files_and_the_aggregate_alone_load_identically(tmp_path):
    _curve(tmp_path / "curves" / "a__xcsf__0.csv", [[0, 0.1 + 0.2, 1 / 7, 5, 6, 0.25, 1], [10, 0.3, 2 / 7, 5, 6, 0.0, 1]])
    _curve(tmp_path / "curves" / "a__kacs__0.csv", [[0, 0.7, 3 / 7, 5, 6, np.pi, 1], [10, 0.6, 4 / 7, 5, 6, 0.0, 1]])
    before = curvestore.load_curves(tmp_path)
    curvestore.update_aggregate(tmp_path, ["a__xcsf__0", "a__kacs__0"])
    shutil.rmtree(tmp_path / "curves")
    after = curvestore.load_curves(tmp_path)
    assert list(before) == list(after) == ["a"]
    for method in ("xcsf", "kacs"):
        pd.testing.assert_frame_equal(before["a"][method][0], after["a"][method][0])
    assert after["a"]["kacs"][0]["cover_rate"].tolist() == [3.14159, 0.0]
    assert after["a"]["xcsf"][0]["train_mae"].tolist() == [0.3, 0.3]


def test_aggregate_keeps_committed_runs_and_drops_unfinished_ones(tmp_path):
    _curve(tmp_path / "curves" / "a__kacs__0.csv", [[0, 0.5, 0.5, 1, 2, 0, 1]])
    _curve(tmp_path / "curves" / "a__kacs__1.csv", [[0, 0.25, 0.25, 1, 2, 0, 1]])
    curvestore.update_aggregate(tmp_path, ["a__kacs__0", "a__kacs__1"])
    shutil.rmtree(tmp_path / "curves")  # a fresh clone: only the aggregate
    _curve(tmp_path / "curves" / "a__kacs__2.csv", [[0, 0.125, 0.125, 1, 2, 0, 1]])
    curvestore.update_aggregate(tmp_path, ["a__kacs__0", "a__kacs__2"])  # run 1 no longer finished
    shutil.rmtree(tmp_path / "curves")
    runs = curvestore.load_curves(tmp_path)["a"]["kacs"]
    assert [int(f["run"].iloc[0]) for f in runs] == [0, 2]
    assert [float(f["train_mae"].iloc[0]) for f in runs] == [0.5, 0.125]


def test_unreadable_aggregate_is_ignored(tmp_path):
    (tmp_path / results.AGGREGATE_FILE).write_bytes(b"not gzip")
    assert curvestore.load_curves(tmp_path) == {}


def test_runner_keeps_the_aggregate_and_a_fresh_clone_reads_it(tmp_path):
    out = tmp_path / "tiny"
    assert _campaign(out).ran == 4
    table = pd.read_csv(out / results.AGGREGATE_FILE)
    # 2 methods x 2 runs x evaluations at 200, 400, 600
    assert len(table) == 12 and table["iteration"].tolist()[:3] == [200, 400, 600]
    assert table[["method", "run"]].drop_duplicates().values.tolist() == [["xcsf", 0], ["xcsf", 1], ["kacs", 0], ["kacs", 1]]
    full = pd.read_csv(out / "curves" / "f3__kacs__1.csv")
    mine = table[(table["method"] == "kacs") & (table["run"] == 1)]
    assert np.allclose(mine["test_mae"], full["test_mae"], rtol=1e-5, atol=0)
    first = (out / results.AGGREGATE_FILE).read_bytes()
    # as committed: runs.csv and the aggregate, no per-run files; a rerun trains nothing
    for sub in ("curves", "runs", "populations"):
        shutil.rmtree(out / sub)
    assert _campaign(out).ran == 0
    assert (out / results.AGGREGATE_FILE).read_bytes() == first
    assert sum(len(v) for v in curvestore.load_curves(out)["f3"].values()) == 4
