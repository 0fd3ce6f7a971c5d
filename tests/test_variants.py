"""Variants against their base (reporting/variants.py): which method is read against which,
and the per-cell changes and tests recomputed by hand from runs.csv."""

import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import wilcoxon

from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.config import resolve_config
from kacs_cli.reporting.build import build_report
from kacs_cli.reporting.loading import load_config
from kacs_cli.reporting.variants import bases

from test_runner import campaign

METHODS = {
    "kacs": None,
    "kacs-eta": {"method": "kacs", "eta": 0.01},
    "kacs-eta-q": {"method": "kacs", "eta": 0.01, "input_transform": "quantile"},
    "kacs-q": {"method": "kacs", "input_transform": "quantile"},
    # a refinement setting without the refinement: recorded, and changes nothing
    "kacs-rs": {"method": "kacs", "refine_smoothness": 1.0},
    "xcsf": None,
    "xcsf-eta": {"method": "xcsf", "eta": 0.01},
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("variants") / "out"
    raw = {"experiment": "var", "methods": METHODS,
           "benchmarks": [{"name": "f1", "n": 2, "samples": 150}, {"name": "f4", "n": 2, "samples": 150}],
           "protocol": {"name": "main", "runs": 6}, "iterations": 600, "eval_every": 600}
    campaign(resolve_config(json.loads(json.dumps(raw))), out, jobs=1)
    return out


def test_each_variant_is_read_against_the_closest_method_it_extends(folder):
    found = bases(load_config(folder), list(METHODS))
    # kacs-eta-q extends both kacs-eta and kacs-q by one change; of equal distance the first listed
    assert found == {"kacs-eta": "kacs", "kacs-eta-q": "kacs-eta", "kacs-q": "kacs", "kacs-rs": "kacs",
                     "xcsf-eta": "xcsf"}


@pytest.mark.slow
def test_the_changes_and_their_tests_are_those_of_the_paired_runs(folder):
    build_report(folder, formats=("md", "csv"), figures=False)
    table = pd.read_csv(folder / "report" / "var_variants.csv")
    runs = pd.read_csv(folder / "runs.csv")
    rows = table[table["variant"] == "kacs-eta"].set_index("cell")
    raw_p = {}
    for cell in ("f1", "f4"):
        here = runs[runs["benchmark"] == cell]
        x = here[here["method"] == "kacs"].set_index("run")["test_mae"].sort_index()
        y = here[here["method"] == "kacs-eta"].set_index("run")["test_mae"].sort_index()
        assert rows.loc[cell, "n_pairs"] == 6
        assert rows.loc[cell, "error_change_pct"] == pytest.approx(100 * (y.mean() / x.mean() - 1))
        raw_p[cell] = wilcoxon(x.to_numpy(), y.to_numpy()).pvalue
        assert rows.loc[cell, "error_p"] == pytest.approx(raw_p[cell])
    low, high = sorted(raw_p.values())
    holm = {min(raw_p, key=raw_p.get): min(1, 2 * low), max(raw_p, key=raw_p.get): min(1, max(2 * low, high))}
    for cell, p in holm.items():
        assert rows.loc[cell, "error_p_holm"] == pytest.approx(p)
    same = table[table["variant"] == "kacs-rs"]
    assert (same["identical"] == same["n_pairs"]).all() and (same["error_change_pct"] == 0).all()
    assert not (table[table["variant"] == "kacs-eta"]["identical"] == 6).all()
    overview = re.search(r"^\| kacs-rs +\| kacs +\| +(\d+) \| +(\d+) \|", (folder / "report" / "report.md").read_text(), re.M)
    assert overview and overview.groups() == ("2", "2")  # two cells, both identical in every pair


def test_a_variant_of_several_changes_at_once_is_read_against_the_plainest_method():
    methods = {"xcsf": None, "xcsf-a": {"method": "xcsf", "article_mutation": True},
               "xcsf-b": {"method": "xcsf", "article_reshuffle": True},
               "xcsf-ab": {"method": "xcsf", "article_mutation": True, "article_reshuffle": True},
               "xcsf-abc": {"method": "xcsf", "article_mutation": True, "article_reshuffle": True,
                            "article_intervals": True},
               "xcsf-all": {"method": "xcsf", "article_offspring": True, "article_subsumption": True}}
    raw = {"experiment": "v", "methods": methods, "benchmarks": [{"name": "f1", "n": 2, "samples": 50}],
           "protocol": {"name": "main", "runs": 1}}
    resolved = results.ResolvedConfig.of(yaml.safe_load(resolve_config(raw).to_yaml()))
    found = bases(resolved, list(methods))
    assert found == {"xcsf-a": "xcsf", "xcsf-b": "xcsf", "xcsf-ab": "xcsf-a", "xcsf-abc": "xcsf-ab",
                     "xcsf-all": "xcsf"}
