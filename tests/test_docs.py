"""The documents stand on their own and cannot drift from the committed results.

- every results table and every marked number in README.md and docs/*.md is what
  `make docs-tables` renders from the committed runs (tools/doctables, outside the package);
- every relative link points at a file of the repository, and every #anchor at a heading;
- every `kacs_cli` import in a document's Python example names a module and name that exist;
- no document, docstring or comment cites a file outside the repository: the algorithm is
  docs/algorithm.md, and ../shared/datasets appears only as an optional data location.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pandas as pd
import pytest

from tools import doctables

from layer_support import imports
from repo_support import REPO

DOCS = doctables.documents(REPO)
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^()\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {anchor(h) for h in HEADING.findall(text)}


def test_documents_are_found() -> None:
    names = {p.relative_to(REPO).as_posix() for p in DOCS}
    assert {"README.md", "docs/algorithm.md", "docs/experiments.md"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_tables_and_numbers_match_the_committed_runs(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    rendered = doctables.render_document(text, doctables.Runs(REPO))
    if rendered != text:
        old, new = text.splitlines(), rendered.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        pytest.fail(f"{path.relative_to(REPO)} differs from the committed runs at line {first + 1}:\n"
                    f"  document: {old[first] if first < len(old) else '(end)'}\n"
                    f"  runs:     {new[first] if first < len(new) else '(end)'}\n"
                    f"run `make docs-tables` and commit the result")


def test_every_marker_is_closed_and_known() -> None:
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        opened = re.findall(r"<!-- table: ([a-z0-9-]+) -->", text)
        assert len(opened) == len(doctables.MARKER.findall(text)) == text.count("<!-- end table -->"), path
        assert set(opened) <= set(doctables.TABLES), path
        values = re.findall(r"<!-- value: ([a-z0-9-]+)", text)
        assert len(values) == len(doctables.VALUE.findall(text)), path
        assert set(values) <= set(doctables.VALUES), path


def test_a_stale_table_or_number_is_rendered_anew() -> None:
    runs = doctables.Runs(REPO)
    rows = sum(1 for _ in (REPO / "results" / "baselines" / "runs.csv").open(encoding="utf-8")) - 1
    stale = "<!-- value: runs baselines -->1<!-- end --> runs\n<!-- table: suprb-literature -->\nold\n<!-- end table -->\n"
    rendered = doctables.render_document(stale, runs)
    assert rendered.startswith(f"<!-- value: runs baselines -->{rows:,}<!-- end --> runs\n")
    table = rendered.split("<!-- table: suprb-literature -->\n")[1].split("<!-- end table -->")[0]
    assert "old" not in table and table in (REPO / "docs" / "algorithm.md").read_text(encoding="utf-8")


def test_the_package_never_imports_the_generator() -> None:
    package = REPO / "kacs_cli"
    found = [f"{path.relative_to(REPO)}: {name}" for path in package.rglob("*.py")
             for name, _ in imports(path) if name == "tools" or name.startswith("tools.")]
    assert not found, found
    assert not list(package.rglob("doctables*")), "the document generator lives in tools/doctables"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_relative_links_resolve(path: Path) -> None:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked here
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor")
        elif dest.exists() and REPO not in dest.parents and dest != REPO:
            broken.append(f"{target}: outside the repository")
    assert not broken, f"{path.relative_to(REPO)}: " + "; ".join(broken)


def package_imports(text: str) -> list[tuple[str, str | None]]:
    """(module, name) of every `kacs_cli` import line in the document's Python blocks; name is
    None for `import kacs_cli...`."""
    found = []
    for block in PYTHON_BLOCK.findall(text):
        for line in block.splitlines():
            if not re.match(r"\s*(from|import) kacs_cli\b", line):
                continue
            node = ast.parse(line.strip()).body[0]
            if isinstance(node, ast.ImportFrom):
                found += [(node.module, alias.name) for alias in node.names]
            else:
                found += [(alias.name, None) for alias in node.names]
    return found


def test_package_imports_finds_both_forms() -> None:
    text = "```python\nfrom kacs_cli.a import B, C as D\nimport kacs_cli.e\nx = 1\n```\n"
    assert package_imports(text) == [("kacs_cli.a", "B"), ("kacs_cli.a", "C"), ("kacs_cli.e", None)]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_examples_import_what_the_package_has(path: Path) -> None:
    broken = []
    for module, name in package_imports(path.read_text(encoding="utf-8")):
        try:
            imported = importlib.import_module(module)
        except ImportError:
            broken.append(f"no module {module}")
            continue
        if name is not None and not hasattr(imported, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                broken.append(f"{module} has no {name}")
    assert not broken, f"{path.relative_to(REPO)}: " + "; ".join(broken)


def _sources() -> list[Path]:
    files = [*DOCS, REPO / "datasets" / "README.md", REPO / "Makefile"]
    for folder in ("kacs_cli", "tests", "configs", "tools"):
        files += [p for p in (REPO / folder).rglob("*") if p.suffix in (".py", ".yaml", ".md")]
    return [p for p in files if p.is_file() and p != Path(__file__)]


def test_nothing_cites_a_file_outside_the_repository() -> None:
    bad = []
    for path in _sources():
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bSPEC\b|SPEC\.md|NOTES\.md|\bNOTES\b", line):
                bad.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
            for ref in re.findall(r"\.\./shared/?[\w./-]*", line):
                if not ref.startswith("../shared/datasets") and ref.rstrip("/") != "../shared":
                    bad.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
    assert not bad, "cite docs/algorithm.md instead:\n" + "\n".join(bad)


def test_the_readable_reading_counts_what_a_hand_built_front_says(tmp_path: Path) -> None:
    """The numbers of the accuracy-against-size prose, on a front written by hand: f1's most
    accurate readable model is EBM and X-KAN its least accurate; on the real data X-KAN beats
    KACS at 20 % on three of four datasets (by 10 % on ASN, 20 % on CS, 50 % on EEC), with 2
    to 8 times its parameters; X-KAN at n = 2 holds 8 (n + 1)(2n + 1) = 120 numbers a rule."""
    def point(cell, method, mae, params, on_front, by=None):
        return dict(cell=cell, method=method, kind="readable", source="", runs=3, test_error=mae,
                    params=params, on_front=on_front, tied_with=None, dominated_by=by,
                    error_ratio=None if by is None else 1.5, params_ratio=None if by is None else 2.0)
    rows = [point("f1", "kacs-r01", 0.30, 20, True), point("f1", "kacs-r20", 0.25, 500, False, "ebm"),
            point("f1", "ebm", 0.10, 400, True), point("f1", "xkan", 0.40, 1200, False, "ebm")]
    for cell, kacs, xkan in (("asn", 0.10, 0.09), ("ccpp", 0.10, 0.12), ("cs", 0.10, 0.08), ("eec", 0.10, 0.05)):
        rows += [point(cell, "kacs-r20", kacs, 100, True), point(cell, "xkan", xkan, 240, True)]
    rows[-1]["params"] = 800
    report = tmp_path / "results" / "readable" / "report"
    report.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(report / "readable_pareto.csv", index=False)
    pd.DataFrame({"benchmark": ["f1", "asn", "ccpp", "cs", "eec"], "n": [2] * 5}).to_csv(
        tmp_path / "results" / "readable" / "runs.csv", index=False)
    runs = doctables.Runs(tmp_path)

    def value(name, arg=None):
        return doctables.VALUES[name](runs, arg)
    assert value("readable-top-of", "ebm*") == "f1"
    assert value("readable-least", "xkan") == "f1 and CCPP"
    assert value("readable-smallest-of", "kacs-r*") == "f1, ASN, CCPP, CS and EEC"
    assert value("readable-kacs-alone") == "none"
    assert value("readable-front-of", "xkan") == "ASN, CCPP, CS and EEC"
    assert value("readable-xkan-beats") == "3 of 4"
    assert value("readable-xkan-gain") == "10 % on ASN to 50 % on EEC"
    assert value("readable-xkan-size") == "2 to 8"
    assert value("readable-range", "rules:xkan:real") == "2.0 to 6.7"
    assert value("readable-range", "params:xkan:f1") == "1,200"
    assert value("readable-dominated", "f1:kacs-r20") == "dominated by ebm (MAE x1.50, params x2.00)"
    assert value("readable-best-kacs", "f1") == "0.250"
    assert value("readable-runs") == "3 runs"
    configs = tmp_path / "configs"
    configs.mkdir()
    readable = re.sub(r"(?m)^reuse:.*$", "", (REPO / "configs" / "readable.yaml").read_text())  # its folders are not here
    (configs / "readable.yaml").write_text(readable.replace("runs: 30}", "runs: 5}"))
    assert value("readable-runs", "configured") == "3 of the 5 configured runs"
    (configs / "readable.yaml").write_text(readable.replace("runs: 30}", "runs: 3}"))
    assert value("readable-runs", "configured") == "all 3 configured runs"


def _make_recipe(target: str) -> list[str]:
    """The command lines of a Makefile target's recipe."""
    text = (REPO / "Makefile").read_text()
    m = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M)
    assert m, f"the Makefile has no target {target}"
    return [line.strip() for line in m.group(1).splitlines()]


def test_ci_runs_the_install_and_the_test_command_the_readme_gives() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Install and test", 1)[1]
    block = re.search(r"^```sh\n(.*?)^```", section, re.S | re.M).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
          if line.strip().startswith("make ")]
    assert commands == ci == ["make install", "make test"], (commands, ci)
    # the full suite, every marker included; `make quick` is the quick set without the slow tests
    assert _make_recipe("test") == ["$(BIN)/python -m pytest -q"]
    assert _make_recipe("quick") == ['$(BIN)/python -m pytest -q -m "not slow"']
