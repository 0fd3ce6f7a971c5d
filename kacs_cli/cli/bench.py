"""`kacs bench`: engine speed on the reference workload or the costly scaling cells, and the
recommended fit's time against the training rows (`--workload rows`)."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

from kacs_cli.errors import UserError


def register(app: typer.Typer) -> None:
    @app.command("bench")
    def bench(
        json_output: bool = typer.Option(
            False, "--json", help="Print one JSON object per workload (one per line) instead of a table."),
        vs_xcsf_lib: bool = typer.Option(
            False, "--vs-xcsf-lib",
            help="Also run the xcsf package from PyPI (optional extra) on the same data and settings."),
        iterations: int = typer.Option(100_000, "--iterations", min=100, help="Iterations per timed run."),
        workload: str = typer.Option(
            "reference", "--workload",
            help="reference (f3 n=10 N=6400), n18-N15984, n20-N6400, n20-N19680; several "
                 "separated by commas, or all (these four). rows: the recommended KACS fit beside "
                 "HistGradientBoostingRegressor at each --rows count of generated rows."),
        rows: str = typer.Option(
            "10000,100000,1000000", "--rows",
            help="The rows workload's training-row counts, separated by commas."),
        repeat: int = typer.Option(1, "--repeat", min=1, help="Timed runs per learner; the median is reported."),
        profile: bool = typer.Option(
            False, "--profile",
            help="KACS only: also report where an iteration's cycles go, by phase (matching, "
                 "means, rule update, GA, ...), pooled over the --repeat runs; the runs compute "
                 "the same numbers as without."),
        against: str = typer.Option(
            None, "--against",
            help="Another installation's kacs command (such as an older checkout's .venv/bin/kacs): "
                 "--repeat rounds, each timing this code and then that one on the workload, and "
                 "the speed-up of each round (that code's seconds over this code's) and their median."),
    ) -> None:
        """Time a 100,000-iteration run of KACS and XCSF on generated f3 (1000 samples).

        The default workload is n = 10, N = 6400; --workload picks the costly cells of the
        dimensional-scaling experiment. JIT compilation is warmed up first; evaluation every
        2000 iterations is included. --workload rows times the recommended KACS fit and
        HistGradientBoostingRegressor on each --rows count of generated rows instead (one core).
        --against times another installation in turn with this one, round by round.
        """
        from kacs_cli.cli.timing import (LEARNERS, PROFILED, ROWS_WORKLOAD, WORKLOADS, get_workload, run_against,
                                         run_bench, run_rows_bench)

        names = list(WORKLOADS) if workload.strip() == "all" else [w.strip() for w in workload.split(",")]
        for name in names:
            if name != ROWS_WORKLOAD:
                get_workload(name)  # refuse a bad name before anything runs
        counts = _row_counts(rows) if ROWS_WORKLOAD in names else ()
        for flag, given in (("--profile", profile), ("--vs-xcsf-lib", vs_xcsf_lib), ("--against", against)):
            if given and ROWS_WORKLOAD in names:
                raise UserError(f"{flag} acts on the engine workloads; drop it for the rows workload")
        for flag, given in (("--profile", profile), ("--vs-xcsf-lib", vs_xcsf_lib)):
            if given and against:
                raise UserError(f"--against times the two codes alone; drop {flag}")
        console = Console()
        for name in names:
            if name == ROWS_WORKLOAD:
                results = [run_rows_bench(count, iterations=iterations, repeat=repeat) for count in counts]
                if json_output:
                    for result in results:
                        print(json.dumps(result), flush=True)
                else:
                    console.print(_rows_table(results, iterations, repeat))
                continue
            if against:
                result = run_against(against, name, iterations, repeat)
                if json_output:
                    print(json.dumps(result), flush=True)
                else:
                    console.print(_against_table(result))
                continue
            result = run_bench(iterations=iterations, vs_xcsf_lib=vs_xcsf_lib, workload_name=name,
                               repeat=repeat, profile=profile)
            if json_output:
                print(json.dumps(result), flush=True)
                continue
            wl = WORKLOADS[name]
            runs = f"median of {repeat} runs, " if repeat > 1 else ""
            table = Table(title=f"{wl.name}: {wl.title}, {iterations:,} iterations ({runs}one core)")
            for col in ("learner", "seconds", "iterations/s", "test MAE", "rules"):
                table.add_column(col, justify="right")
            for m in LEARNERS:
                table.add_row(m.upper(), f"{result[f'{m}_seconds']:.2f}", f"{result[f'{m}_its_per_s']:,.0f}",
                              f"{result[f'{m}_test_mae']:.4f}", f"{result[f'{m}_rules']:,}")
            if vs_xcsf_lib:
                table.add_row("xcsf (PyPI)", f"{result['xcsf_lib_seconds']:.2f}",
                              f"{result['xcsf_lib_its_per_s']:,.0f}", f"{result['xcsf_lib_test_mae']:.4f}", "")
            console.print(table)
            if repeat > 1:
                for m in LEARNERS:
                    console.print(f"{m.upper()} runs: " + ", ".join(f"{s:.2f}" for s in result[f"{m}_runs_seconds"]) + " s")
                if vs_xcsf_lib:
                    console.print("xcsf library runs: " + ", ".join(f"{s:.2f}" for s in result["xcsf_lib_runs_seconds"]) + " s")
            if profile:
                console.print(_profile_table(result, PROFILED, repeat))
            console.print(f"peak memory: {result['peak_memory_mib']:.0f} MiB")
            if vs_xcsf_lib:
                console.print(f"our XCSF is {result['xcsf_speedup_vs_lib']:.1f}x the rate of the xcsf library")


def _row_counts(text: str) -> tuple[int, ...]:
    """--rows as training-row counts, each a whole number of at least 10 (the fits' smallest data)."""
    counts = []
    for cell in text.split(","):
        try:
            count = int(cell.strip().replace("_", ""))
        except ValueError:
            count = 0
        if count < 10:
            raise UserError(f"--rows takes whole numbers of at least 10 separated by commas, got {cell.strip()!r}")
        counts.append(count)
    return tuple(counts)


def _rows_table(results: list[dict], iterations: int, repeat: int) -> Table:
    runs = f"median of {repeat} fits, " if repeat > 1 else ""
    table = Table(title=f"recommended KACS ({iterations:,} iterations) and HistGradientBoostingRegressor "
                        f"against training rows ({runs}one core; test MAE on {results[0]['test_rows']:,} "
                        f"further rows)")
    for col in ("rows", "KACS seconds", "boosting seconds", "KACS / boosting", "KACS test MAE",
                "boosting test MAE", "KACS N chosen"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(f"{r['rows']:,}", f"{r['kacs_seconds']:.1f}", f"{r['gbr_seconds']:.1f}",
                      f"{r['kacs_over_gbr']:.1f}x", f"{r['kacs_test_mae']:.4f}", f"{r['gbr_test_mae']:.4f}",
                      f"{r['kacs_N']:,}")
    return table


def _against_table(result: dict) -> Table:
    from kacs_cli.cli.timing import LEARNERS, WORKLOADS

    wl = WORKLOADS[result["workload"]]
    table = Table(title=f"{wl.name}: {wl.title}, {result['iterations']:,} iterations, this code against "
                        f"{result['against']} in {result['repeat']} rounds (one core)")
    for col in ("learner", "this code (s)", "other (s)", "speed-up by round", "median speed-up",
                "test MAE (this, other)", "rules (this, other)"):
        table.add_column(col, justify="right")
    for m in LEARNERS:
        table.add_row(m.upper(), f"{result[f'{m}_seconds']:.2f}", f"{result[f'{m}_against_seconds']:.2f}",
                      ", ".join(f"{v:.2f}" for v in result[f"{m}_speedups"]), f"{result[f'{m}_speedup']:.2f}x",
                      f"{result[f'{m}_test_mae']:.4f}, {result[f'{m}_against_test_mae']:.4f}",
                      f"{result[f'{m}_rules']:,}, {result[f'{m}_against_rules']:,}")
    return table


def _profile_table(result: dict, method: str, repeat: int) -> Table:
    profile = result[f"{method}_profile"]
    seconds = result[f"{method}_seconds"]
    # The title stays short: rich wraps it to the table's width.
    table = Table(title=f"{method.upper()}: cycles per iteration by phase",
                  caption=(f"pooled over {repeat} runs; median run {seconds:.2f} s" if repeat > 1
                           else f"run: {seconds:.2f} s"))
    for col in ("phase", "cycles/iteration", "share"):
        table.add_column(col, justify="left" if col == "phase" else "right")
    for phase in profile["phases"].values():
        table.add_row(phase["label"], f"{phase['cycles_per_iteration']:,.0f}",
                      f"{100.0 * phase['share']:.1f} %")
    table.add_row("whole run", f"{profile['cycles_per_iteration']:,.0f}", "100.0 %")
    return table
