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
import shlex
import tomllib
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


def test_every_marker_is_closed_and_names_what_there_is() -> None:
    """A document's own table or value is one the generator declares; a report table is one a
    committed report holds, with one alignment letter per column; a value's row and column are
    in it (the slow check above renders every marker)."""
    runs = doctables.Runs(REPO)
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        opened = re.findall(r"(?m)^<!-- table: ([^>\n]*?) -->", text)
        assert len(opened) == len(doctables.MARKER.findall(text)) == text.count("<!-- end table -->"), path
        for args in opened:
            parts = shlex.split(args)
            if len(parts) == 1:
                assert parts[0] in doctables.TABLES, (path, args)
            else:
                folder, kind, align = parts
                assert len(runs.text(folder, kind)[0]) == len(align) or len(runs.text(folder, kind)) == 1, (path, args)
        values = re.findall(r"(?<!`)<!-- value: ([^>\n]*?) -->", text)
        assert len(values) == len(doctables.VALUE.findall(text)), path
        for args in values:
            parts = shlex.split(args)
            if len(parts) <= 2:
                assert parts[0] in doctables.VALUES, (path, args)
            else:
                runs.cell(*parts[:4])


def test_a_stale_table_or_number_is_rendered_anew() -> None:
    runs = doctables.Runs(REPO)
    rows = sum(1 for _ in (REPO / "results" / "baselines" / "runs.csv").open(encoding="utf-8")) - 1
    stale = ("<!-- value: runs baselines -->1<!-- end --> runs\n"
             "<!-- table: paper/suprb quoted-literature lllll -->\nold\n<!-- end table -->\n")
    rendered = doctables.render_document(stale, runs)
    assert rendered.startswith(f"<!-- value: runs baselines -->{rows:,}<!-- end --> runs\n")
    table = rendered.split("<!-- table: paper/suprb quoted-literature lllll -->\n")[1].split("<!-- end table -->")[0]
    assert "old" not in table and table in (REPO / "docs" / "algorithm.md").read_text(encoding="utf-8")


def _report(root: Path, folder: str, kind: str, text: str) -> None:
    report = root / "results" / folder / "report"
    report.mkdir(parents=True, exist_ok=True)
    (report / f"{folder.replace('/', '-')}_{kind}.csv").write_text(text, encoding="utf-8")


def test_a_marker_copies_a_report_tables_cells_as_written(tmp_path: Path) -> None:
    _report(tmp_path, "x/y", "quoted", 'quote,text\nruns,30\nwords,"3 of 8, all level"\n')
    _report(tmp_path, "x/y", "pareto", "cell,method,test_error,params\nf1,ebm,0.12345,2400\nf1 (n=2),kan,0.00041,76543.2\n")
    _report(tmp_path, "x/y", "quoted-front", "benchmark,runs,verdict\nf1,30,**0.1** +\nASN,29,—\n")
    _report(tmp_path, "x/y", "quoted-empty", "(no dataset has all its methods' runs yet)\n")
    runs = doctables.Runs(tmp_path)

    def value(args):
        return doctables.render_value(args, doctables.VALUES, runs)
    assert value("x/y quoted words") == "3 of 8, all level"  # the last column when none is named
    assert value("x/y quoted runs text") == "30"
    assert value("x/y pareto cell=f1,method=ebm test_error .3f") == "0.123"
    assert value('x/y pareto "cell=f1 (n=2)" params ,.0f') == "76,543"
    assert value('x/y pareto "cell=f1 (n=2),method=kan" test_error p') == "4e-4"
    assert value("x/y pareto f1 method") == "ebm"  # a bare ROW is the first column's value
    with pytest.raises(KeyError, match="0 rows"):
        value("x/y quoted missing")
    assert doctables.render_table("x/y quoted-front lrc", doctables.TABLES, runs) == (
        "| benchmark | runs | verdict |\n|---|---:|:---:|\n| f1 | 30 | **0.1** + |\n| ASN | 29 | — |\n")
    assert doctables.render_table("x/y quoted-empty l", doctables.TABLES, runs) == \
        "(no dataset has all its methods' runs yet)\n"
    with pytest.raises(ValueError, match="2 alignments for 3 columns"):
        doctables.render_table("x/y quoted-front lr", doctables.TABLES, runs)
    with pytest.raises(KeyError, match="unknown table 'nothing'"):
        doctables.render_table("nothing", doctables.TABLES, runs)


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


def test_check_names_a_stale_document_and_leaves_it(tmp_path: Path, capsys) -> None:
    _report(tmp_path, "x", "quoted", "quote,text\nruns,30\n")
    (tmp_path / "docs").mkdir()
    stale = "<!-- value: x quoted runs -->29<!-- end --> runs\n"
    (tmp_path / "README.md").write_text(stale, encoding="utf-8")
    assert doctables.main(["--check", str(tmp_path)]) == 1
    assert "README.md differs" in capsys.readouterr().out
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == stale
    assert doctables.main([str(tmp_path)]) == 0
    assert doctables.main(["--check", str(tmp_path)]) == 0
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "<!-- value: x quoted runs -->30<!-- end --> runs\n"


def test_a_range_over_readable_points_is_read_from_the_pareto_table(tmp_path: Path) -> None:
    """X-KAN's parameters and rules (8 (n + 1)(2n + 1) numbers a rule at n = 2: 120) over
    chosen points of a front written by hand."""
    points = pd.DataFrame({"cell": ["f1", "asn", "eec", "f1"], "method": ["xkan", "xkan", "xkan", "kacs-r01"],
                           "kind": "readable", "test_error": [0.4, 0.09, 0.05, 0.3], "params": [1200, 240, 800, 20],
                           "on_front": [False, True, True, True]})
    report = tmp_path / "results" / "readable" / "report"
    report.mkdir(parents=True)
    points.to_csv(report / "readable_pareto.csv", index=False)
    pd.DataFrame({"benchmark": ["f1", "asn", "eec"], "n": [2, 2, 2]}).to_csv(report.parent / "runs.csv", index=False)
    runs = doctables.Runs(tmp_path)

    def value(arg):
        return doctables.VALUES["readable-range"](runs, arg)
    assert value("params:xkan:f1") == "1,200"
    assert value("rules:xkan:real") == "2.0 to 6.7"
    assert value("params:xkan:front") == "240 to 800"
    assert value("mae:kacs-r*,xkan:f1") == "0.30 to 0.40"
    with pytest.raises(ValueError, match="no points"):
        value("params:ebm:all")


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
    # the full suite, every marker included; `make quick` is the quick set without the slow tests;
    # both in worker processes, through pytest-xdist, which the test extra installs
    assert _make_recipe("test") == ["$(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile"]
    assert _make_recipe("quick") == ['$(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile -m "not slow"']
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(re.match(r"pytest-xdist\b", requirement) for requirement in extras["test"]), extras["test"]
