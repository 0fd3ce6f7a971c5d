"""`kacs bench`: engine speed on the reference workload or the costly scaling cells."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table


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
                 "separated by commas, or all."),
        repeat: int = typer.Option(1, "--repeat", min=1, help="Timed runs per learner; the median is reported."),
        profile: bool = typer.Option(
            False, "--profile",
            help="KACS only: also report where an iteration's cycles go, by phase (matching, "
                 "means, rule update, GA, ...), pooled over the --repeat runs; the runs compute "
                 "the same numbers as without."),
    ) -> None:
        """Time a 100,000-iteration run of KACS and XCSF on generated f3 (1000 samples).

        The default workload is n = 10, N = 6400; --workload picks the costly cells of the
        dimensional-scaling experiment. JIT compilation is warmed up first; evaluation every
        2000 iterations is included.
        """
        from kacs_cli.cli.timing import LEARNERS, PROFILED, WORKLOADS, get_workload, run_bench

        names = list(WORKLOADS) if workload.strip() == "all" else [w.strip() for w in workload.split(",")]
        for name in names:
            get_workload(name)  # refuse a bad name before anything runs
        console = Console()
        for name in names:
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
