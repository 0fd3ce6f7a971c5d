"""`kacs bench`: engine speed on the reference workload."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table


def register(app: typer.Typer) -> None:
    @app.command("bench")
    def bench(
        json_output: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
        vs_xcsf_lib: bool = typer.Option(
            False, "--vs-xcsf-lib",
            help="Also run the xcsf package from PyPI (optional extra) on the same data and settings."),
        iterations: int = typer.Option(100_000, "--iterations", min=100, help="Iterations per timed run."),
    ) -> None:
        """Time a 100,000-iteration run of KACS and XCSF on f3 (n = 10, 1000 samples, N = 6400).

        JIT compilation is warmed up first; evaluation every 2000 iterations is included.
        """
        from kacs_cli.bench import run_bench

        result = run_bench(iterations=iterations, vs_xcsf_lib=vs_xcsf_lib)
        if json_output:
            print(json.dumps(result))
            return
        table = Table(title=f"f3, n = 10, N = 6400, {iterations:,} iterations (one core)")
        for col in ("learner", "seconds", "iterations/s", "test MAE", "rules"):
            table.add_column(col, justify="right")
        for m in ("kacs", "xcsf"):
            table.add_row(m.upper(), f"{result[f'{m}_seconds']:.2f}", f"{result[f'{m}_its_per_s']:,.0f}",
                          f"{result[f'{m}_test_mae']:.4f}", f"{result[f'{m}_rules']:,}")
        if vs_xcsf_lib:
            table.add_row("xcsf (PyPI)", f"{result['xcsf_lib_seconds']:.2f}",
                          f"{result['xcsf_lib_its_per_s']:,.0f}", f"{result['xcsf_lib_test_mae']:.4f}", "")
        console = Console()
        console.print(table)
        console.print(f"peak memory: {result['peak_memory_mib']:.0f} MiB")
        if vs_xcsf_lib:
            console.print(f"our XCSF is {result['xcsf_speedup_vs_lib']:.1f}x the rate of the xcsf library")
