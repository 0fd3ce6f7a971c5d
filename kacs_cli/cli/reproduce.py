"""`kacs reproduce FOLDER`: train runs 0..K-1 of a results folder again with the current code
and say, cell by cell, whether they agree with the committed ones (kacs_cli/reporting/reproduce.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

import typer

from kacs_cli.cli.run import DATA_DIR_HELP, JOBS_HELP, check_positive
from kacs_cli.errors import Interrupted, UserError

_OUT_HELP = ("Folder the runs are trained into (default results/reproduce/<experiment>); rerunning resumes "
             "there. It also receives reproduction.md and reproduction.csv.")


def _read_folder(folder: Path):
    """(the folder's resolved config, its runs.csv), or a UserError saying what is missing."""
    from kacs_cli.experiments.campaign import results

    try:
        resolved = results.ResolvedConfig.read(folder)
    except results.UnreadableConfig as exc:
        raise UserError(f"{exc}; restore it to reproduce {folder}") from None
    if resolved is None or resolved.cells is None or not results.has_runs(folder):
        raise UserError(f"{folder} is not a results folder of `kacs run` (it needs the {results.CONFIG_FILE} "
                        f"`kacs run` writes and a {results.RUNS_FILE}); name such a folder, e.g. results/paper/main")
    committed = results.read_runs_csv(results.runs_path(folder))
    if committed.empty or "benchmark" not in committed.columns:
        raise UserError(f"{results.runs_path(folder)} holds no runs, so there is nothing to reproduce")
    return resolved, committed


def _engine_line(folder: Path, running) -> str:
    """Which engine wrote the folder's rows, against the one running now."""
    from kacs_cli.experiments.campaign import provenance, results

    recorded = provenance.read(folder)
    if recorded is None:
        return (f"{folder} has no {results.ENGINE_FILE} (written before the record existed); this is "
                f"{running.describe()}")
    verdict = "the same engine" if recorded.same_engine(running) else "another engine"
    return f"{folder} was written by {recorded.describe()}; this is {verdict}: {running.describe()}"


def _check_out(out: Path, folder: Path, running, force: bool) -> None:
    """The runs are trained with the current engine only, never into the folder itself."""
    from kacs_cli.experiments.campaign import provenance

    if out.resolve() == folder.resolve():
        raise UserError(f"--out is {folder} itself; name another folder for the runs trained again")
    recorded = None if force or not out.is_dir() else provenance.read(out)
    if recorded is not None and not recorded.same_engine(running):
        raise UserError(f"{out} holds runs of another engine ({recorded.describe()}) than this one "
                        f"({running.describe()}); use --force to start over there or choose another --out")


def _only_methods(config, committed, methods: list[str]):
    """The config and committed rows of the named methods only (all of them when none is named)."""
    if not methods:
        return config, committed
    unknown = [m for m in methods if m not in config.methods]
    if unknown:
        raise UserError(f"--method {unknown[0]} is not a method of this folder; its methods are "
                        f"{', '.join(config.methods)}")
    chosen = tuple(m for m in config.methods if m in methods)
    return dataclasses.replace(config, methods=chosen), committed[committed["method"].isin(chosen)]


def reproduce(folder: Path, *, runs: int, jobs: Optional[int], out: Optional[Path], data_dir: Optional[Path],
              force: bool, methods: Optional[list[str]] = None) -> None:
    from rich.console import Console

    from kacs_cli.cli.campaign import ConsoleReporter
    from kacs_cli.experiments.campaign import provenance, results
    from kacs_cli.experiments.campaign.config import recorded_config
    from kacs_cli.experiments.campaign.runner import folder_differences, run_campaign, with_runs
    from kacs_cli.reporting.reproduce import compare
    from kacs_cli.reporting.tables import render_markdown

    resolved, committed = _read_folder(folder)
    config = recorded_config(resolved, results.config_path(folder))
    diffs = folder_differences(resolved, config)
    if diffs:
        raise UserError(f"{results.config_path(folder)} records settings this version of `kacs run` would not "
                        f"run as written (differs in: {', '.join(diffs)}); reproduce it with the version that "
                        f"wrote it")
    config, committed = _only_methods(with_runs(config, runs), committed, methods or [])
    out = Path(out) if out is not None else Path("results") / "reproduce" / config.experiment
    running = provenance.EngineRecord.current()
    _check_out(out, folder, running, force)
    console = Console()
    console.print(_engine_line(folder, running), markup=False, highlight=False)
    try:
        result = run_campaign(config, out, jobs=jobs, data_dir=data_dir, force=force, reporter=ConsoleReporter())
    except Interrupted as exc:
        exc.kept = f"finished runs are kept in {out}; run the same command again to resume"
        raise
    # read back as the committed rows are, so that equal runs compare equal
    trained = results.read_runs_csv(results.runs_path(result.out))
    new = trained[trained["run"] < runs]
    reproduction = compare(folder, resolved, committed, new)
    csv_path, md_path = reproduction.write(out)
    console.print(render_markdown(reproduction.table()), markup=False, highlight=False, soft_wrap=True)
    console.print(reproduction.summary(), markup=False, highlight=False, soft_wrap=True)
    console.print(f"Table in {md_path} and {csv_path}", markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    @app.command("reproduce")
    def reproduce_command(
        folder: Path = typer.Argument(..., help="A results folder of `kacs run`, e.g. results/paper/main.",
                                      show_default=False),
        runs: int = typer.Option(10, "--runs", help="Runs 0..K-1 of every cell trained again, with the folder's seeds."),
        jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=JOBS_HELP),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help=_OUT_HELP),
        data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
        force: bool = typer.Option(False, "--force", help="Discard an earlier reproduction in --out and start over."),
        method: Optional[list[str]] = typer.Option(None, "--method", "-m", help=(
            "Only this method's cells (a method label of the folder's config); repeat for more. "
            "Default: every method."), show_default=False),
    ) -> None:
        """Train runs of a results folder again and test, cell by cell, whether they agree.

        Per benchmark and method: two-sided Mann-Whitney U on test error and rules against the
        committed runs, Holm over the cells; rows identical bit for bit; the published
        tolerance where the folder is the published main experiment. Exit code 0 either way.
        """
        check_positive(runs, "--runs")
        check_positive(jobs, "--jobs")
        reproduce(folder, runs=runs, jobs=jobs, out=out, data_dir=data_dir, force=force, methods=method)
