"""The tables and values a report writes for the documents (kacs_cli/reporting/quoted): what a
campaign's quotes say on data built by hand, where they are written, that a campaign lacking
what a quote reads gets none of it, and that an earlier render's quotes do not stay behind."""

from __future__ import annotations

import csv
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import yaml

from kacs_cli.reporting.build import build_report
from kacs_cli.reporting.quoted import readable
from kacs_cli.reporting.quoted.common import Source, short_p

from test_report import run_row, write_experiment


def _csv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def _sample_scaling(folder: Path, runs: int = 6) -> Path:
    """f3 at two sample sizes; XCSF's test MAE 0.3 + 0.01 r, KACS's 0.2 + 0.011 r (KACS lower
    in every run by a different amount: exact two-sided Wilcoxon p = 2 / 2^6 = 0.031), 500 and
    50 rules, 1,000 and 100 parameters."""
    rows = [run_row("sample_scaling", "f3", m, r, samples=s, test_mae=base + step * r, train_mae=0.1, rules=rules,
                    params=params, aic=1)
            for s in (125, 250)
            for m, base, step, rules, params in (("xcsf", 0.3, 0.01, 500, 1000), ("kacs", 0.2, 0.011, 50, 100))
            for r in range(runs)]
    return write_experiment(folder, "sample_scaling", rows, [{"name": "f3", "samples": s} for s in (125, 250)],
                            runs=runs)


def test_a_campaign_the_documents_quote_gets_its_tables_and_values_beside_its_report(tmp_path: Path) -> None:
    exp = _sample_scaling(tmp_path / "ns")
    summary = build_report(exp, formats="csv", figures=False)
    report = exp / "report"
    # means 0.3 + 2.5 step, SDs step sqrt(3.5) (n - 1 in the SD): 0.0187 and 0.0206
    assert _csv(report / "sample_scaling_quoted-scaling.csv") == [
        ["N_S", "test MAE XCSF", "test MAE KACS", "rules XCSF", "rules KACS", "params XCSF", "params KACS"],
        ["125", "0.3250 ± 0.0187", "0.2275 ± 0.0206", "500", "50", "1,000", "100"],
        ["250", "0.3250 ± 0.0187", "0.2275 ± 0.0206", "500", "50", "1,000", "100"]]
    assert _csv(report / "sample_scaling_quoted.csv") == [
        ["quote", "text"], ["headline", "KACS lower test MAE at 2 of 2 sample sizes, 10 to 10 times fewer parameters"]]
    assert {report / "sample_scaling_quoted-scaling.csv", report / "sample_scaling_quoted.csv"} <= set(summary.files)


def test_quotes_are_csv_only_and_an_earlier_renders_quotes_do_not_stay_behind(tmp_path: Path) -> None:
    exp = _sample_scaling(tmp_path / "ns")
    report = exp / "report"
    report.mkdir()
    stale = report / "sample_scaling_quoted-gone.csv"
    stale.write_text("a\n1\n")
    other = report / "other_quoted.csv"  # another experiment's, in the same folder: left alone
    other.write_text("quote,text\n")
    build_report(exp, formats="md", figures=False)  # no CSV asked for: no quote written, none removed
    assert stale.exists() and not (report / "sample_scaling_quoted.csv").exists()
    build_report(exp, formats="csv", figures=False)
    assert not stale.exists() and other.exists()
    assert sorted(p.name for p in report.glob("sample_scaling_quoted*.csv")) == [
        "sample_scaling_quoted-scaling.csv", "sample_scaling_quoted.csv"]


def test_a_campaign_lacking_what_a_quote_reads_gets_none_of_it(tmp_path: Path) -> None:
    """An experiment named as a quoted campaign but without its methods (the adaptive budget's
    quotes read kacs-adaptive and the k-method tables), and one the documents do not quote."""
    for name in ("adaptive", "smoke"):
        rows = [run_row(name, "f1", m, r, test_mae=0.2 + 0.01 * r, train_mae=0.1, rules=1, params=1, aic=1)
                for m in ("xcsf", "kacs") for r in range(3)]
        exp = write_experiment(tmp_path / name, name, rows, [{"name": "f1"}], runs=3)
        build_report(exp, formats="csv", figures=False)
        assert (exp / "report" / f"{name}_summary.csv").is_file()
        assert not list((exp / "report").glob("*quoted*")), name


def _readable_source(tmp_path: Path, configured_runs: int = 30) -> Source:
    """A readable front written by hand: f1's most accurate readable model is EBM and X-KAN its
    least accurate; on the real data X-KAN beats KACS at 20 % on three of four datasets (by
    10 % on ASN, 20 % on CS, 50 % on EEC), with 2 to 8 times its parameters."""
    def point(cell, method, mae, params, on_front, by=None):
        return dict(cell=cell, method=method, kind="readable", source="", runs=3, test_error=mae, params=params,
                    on_front=on_front, tied_with=None, dominated_by=by, error_ratio=None if by is None else 1.5,
                    params_ratio=None if by is None else 2.0)
    rows = [point("f1", "kacs-r01", 0.30, 20, True), point("f1", "kacs-r20", 0.25, 500, False, "ebm"),
            point("f1", "ebm", 0.10, 400, True), point("f1", "xkan", 0.40, 1200, False, "ebm")]
    for cell, kacs, xkan in (("asn", 0.10, 0.09), ("ccpp", 0.10, 0.12), ("cs", 0.10, 0.08), ("eec", 0.10, 0.05)):
        rows += [point(cell, "kacs-r20", kacs, 100, True), point(cell, "xkan", xkan, 240, True)]
    rows[-1]["params"] = 800
    folder = tmp_path / "readable"
    (folder / "report").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(folder / "report" / "readable_pareto.csv", index=False)
    (folder / "config.yaml").write_text(yaml.safe_dump({"experiment": "readable",
                                                        "protocol": {"name": "main", "runs": configured_runs}}))
    return Source(SimpleNamespace(name="readable", path=folder), folder / "report")


def test_the_readable_quotes_count_what_a_hand_built_front_says(tmp_path: Path) -> None:
    quoted = readable.readable(_readable_source(tmp_path))
    headers, rows = quoted.tables["roles"]
    roles = {r[0]: dict(zip(headers, r)) for r in rows}
    assert list(roles) == ["kacs-r01", "kacs-r20", "ebm", "xkan", "kacs*", "ebm*", "xkan*"]
    assert roles["ebm*"]["most_accurate"] == "f1"
    assert roles["xkan"]["least_accurate"] == "f1 and CCPP"
    assert roles["kacs*"]["smallest"] == "f1, ASN, CCPP, CS and EEC"
    assert roles["xkan"]["on_front"] == "ASN, CCPP, CS and EEC"
    values = quoted.values
    assert values["kacs-alone"] == "none"
    assert values["front-count"] == "5 of 5"
    assert values["xkan-beats"] == "3 of 4"
    assert values["xkan-gain"] == "10 % on ASN to 50 % on EEC"
    assert values["xkan-size"] == "2 to 8"
    assert values["runs"] == "3 runs"
    assert values["runs-configured"] == "3 of the 30 configured runs"
    assert readable.readable(_readable_source(tmp_path / "3", configured_runs=3)).values["runs-configured"] == \
        "all 3 configured runs"
    standing = {(r[0], r[1]): r[2] for r in quoted.tables["standing"][1]}
    assert standing[("f1", "kacs-r20")] == "dominated by ebm (MAE x1.50, params x2.00)"
    assert standing[("asn", "xkan")] == "on the front"
    assert quoted.tables["best-kacs"][1][0] == ["f1", "kacs-r20", "0.25"]
    front = {r[0]: r for r in quoted.tables["front"][1]}
    assert front["f1"][2:] == ["kacs-r01 (0.3000, 20); ebm (0.1000, 400)", "kacs-r01",
                               "kacs-r20 by ebm (MAE x1.50, params x2.00)"]


def test_a_p_value_in_running_text_has_two_significant_digits() -> None:
    assert [short_p(p) for p in (0.0312, 0.9996, 4.2e-4, 3e-9, float("nan"))] == ["0.031", "1.0", "4e-4", "< 1e-8",
                                                                                    "n/a"]
