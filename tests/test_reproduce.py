"""`kacs reproduce FOLDER`: runs 0..K-1 trained again with the current code, compared cell by
cell with the folder's (Mann-Whitney U, Holm, rows identical bit for bit, the published
tolerance)."""

import shutil

import pandas as pd
import pytest

from cli_support import run_kacs
from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.config import load_config, recorded_config
from kacs_cli.experiments.campaign.results import ResolvedConfig
from kacs_cli.experiments.campaign.runner import folder_differences, run_campaign
from repo_support import REPO
from kacs_cli.reporting.paper import PUBLISHED_SETTING, load_paper_table
from kacs_cli.reporting.reproduce import compare

RUNS = 6  # the smallest sample at which Holm over four exact two-sided U tests can reach 0.05
TINY = ("experiment: tiny\nbenchmarks: [{name: f1, n: 2, samples: 120}]\nhyperparameters: {N: 100}\n"
        f"protocol: {{runs: {RUNS}}}\niterations: 300\neval_every: 150\n")


def kacs(capsys, *argv):
    code, out, err = run_kacs(capsys, *argv)
    return code, " ".join(out.split()), err


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    root = tmp_path_factory.mktemp("reproduce")
    (root / "tiny.yaml").write_text(TINY)
    assert run_campaign(load_config(root / "tiny.yaml"), root / "tiny", jobs=1).ran == 2 * RUNS
    return root / "tiny"


def test_the_same_code_reproduces_every_row(committed, tmp_path, capsys):
    out = tmp_path / "again"
    code, text, err = kacs(capsys, "reproduce", committed, "--runs", RUNS, "--jobs", 1, "--out", out)
    assert code == 0, err
    assert (f"0 of 2 cells differ after Holm (two-sided Mann-Whitney U on test MAE and rules, alpha 0.05); "
            f"{2 * RUNS} of {2 * RUNS} rows with the same seeds are identical bit for bit.") in text
    table = pd.read_csv(out / "reproduction.csv")
    assert list(zip(table.benchmark, table.method)) == [("f1", "xcsf"), ("f1", "kacs")]
    assert not table["differs"].any() and (table["identical"] == RUNS).all()
    assert (table["test_mae_p_holm"] == 1).all()
    assert "| f1 " in (out / "reproduction.md").read_text()
    # the folder trained again is the same campaign with its own record, the committed one untouched
    assert (out / "engine.yaml").is_file() and not (committed / "reproduction.csv").exists()

    # fewer runs: runs 0..K-1, all identical, against every committed run
    code, text, err = kacs(capsys, "reproduce", committed, "--runs", 2, "--jobs", 1, "--out", tmp_path / "two")
    assert code == 0, err
    assert "0 of 2 cells differ" in text and "4 of 4 rows with the same seeds are identical" in text


def test_shifted_committed_errors_make_every_cell_differ(committed, tmp_path, capsys):
    doctored = tmp_path / "doctored"
    shutil.copytree(committed, doctored)
    runs = pd.read_csv(doctored / "runs.csv")
    runs["test_mae"] += 1.0
    runs.to_csv(doctored / "runs.csv", index=False)
    out = tmp_path / "again"
    code, text, err = kacs(capsys, "reproduce", doctored, "--runs", RUNS, "--jobs", 1, "--out", out)
    assert code == 0, err
    assert "2 of 2 cells differ after Holm" in text and f"0 of {2 * RUNS} rows with the same seeds" in text
    table = pd.read_csv(out / "reproduction.csv")
    assert table["differs"].all() and (table["test_mae_p_holm"] < 0.05).all() and (table["rules_p_holm"] == 1).all()


def test_only_the_named_methods_are_trained_and_compared(committed, tmp_path, capsys):
    out = tmp_path / "kacs_only"
    code, text, err = kacs(capsys, "reproduce", committed, "--runs", 2, "--jobs", 1, "--out", out, "--method", "kacs")
    assert code == 0, err
    assert "0 of 1 cells differ" in text and "2 of 2 rows with the same seeds are identical" in text
    assert set(pd.read_csv(out / "runs.csv")["method"]) == {"kacs"}
    assert list(pd.read_csv(out / "reproduction.csv")["method"]) == ["kacs"]
    code, _, err = kacs(capsys, "reproduce", committed, "--out", tmp_path / "x", "--method", "kacs-refined")
    assert code == 2 and err.count("\n") == 1
    assert "--method kacs-refined is not a method of this folder; its methods are xcsf, kacs" in err


def test_a_folder_that_is_no_results_folder_is_one_line(tmp_path, capsys):
    code, _, err = kacs(capsys, "reproduce", tmp_path, "--runs", 2)
    assert code == 2 and err.count("\n") == 1 and "is not a results folder of `kacs run`" in err
    code, _, err = kacs(capsys, "reproduce", tmp_path, "--runs", 0)
    assert code == 2 and "--runs must be a whole number >= 1" in err


def test_the_out_folder_is_never_the_folder_itself(committed, capsys):
    code, _, err = kacs(capsys, "reproduce", committed, "--out", committed)
    assert code == 2 and "--out is" in err and "itself" in err


def test_the_published_main_table_gives_the_tolerance_of_its_cells():
    """A main-experiment folder: new means at the published ones are within, far off are not."""
    config = ResolvedConfig.of({
        "experiment": "main", "semantics": PUBLISHED_SETTING["semantics"], "methods": ["xcsf", "kacs"],
        "protocol": {"name": PUBLISHED_SETTING["protocol"], "runs": 30, "metric": "mae"},
        "iterations": PUBLISHED_SETTING["iterations"],
        "cells": [{"label": "f1", "benchmark": "f1", "variant": None}],
    })
    published = load_paper_table().set_index(["benchmark", "metric"])
    rows = []
    for method, shift in (("xcsf", 0.0), ("kacs", 10.0)):
        for run in range(4):
            rows.append({"benchmark": "f1", "method": method, "run": run, "split_seed": run, "seed": run,
                         "test_mae": published.loc[("f1", "test_mae"), f"{method}_mean"] + shift,
                         "rules": published.loc[("f1", "rules"), f"{method}_mean"]})
    frame = pd.DataFrame(rows)
    result = compare("results/paper/main", config, frame, frame)
    assert list(result.cells["test_mae_within"]) == [True, False]
    assert list(result.cells["rules_within"]) == [True, True]
    assert "3 of 4 new means within max(3 SE, 5 %) of the published ones" in result.summary()
    assert not result.cells["differs"].any() and result.identical == 8


COMMITTED = sorted(p.parent for p in (REPO / "results").rglob(results.CONFIG_FILE) if results.has_runs(p.parent))


@pytest.mark.slow
@pytest.mark.parametrize("folder", COMMITTED, ids=lambda p: str(p.relative_to(REPO / "results")))
def test_every_committed_folder_runs_again_as_its_config_records(folder):
    resolved = ResolvedConfig.read(folder)
    assert folder_differences(resolved, recorded_config(resolved, folder)) == []
