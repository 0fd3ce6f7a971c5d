"""`kacs report RESULTS_DIR`: paper-style tables and figures of finished runs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        results_dir: Path = typer.Argument(
            ..., help="An experiment directory (with runs.csv) or any folder holding experiments, at any depth."
        ),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", help="Where to write the report (default: RESULTS_DIR/report)."
        ),
        fmt: str = typer.Option(
            "md,tex,csv", "--format", "-f", help="Comma-separated table formats: md, tex, csv."
        ),
        paper: bool = typer.Option(
            False, "--paper", help="Compare the main experiment with the published table (z, within, verdicts)."
        ),
        figures: bool = typer.Option(True, "--figures/--no-figures", help="Draw the PNG figures."),
        control: Optional[str] = typer.Option(
            None, "--control", help="Control method of the k-method statistics (cells with more than two methods; default: kacs)."
        ),
    ) -> None:
        """Summary, detailed and scaling tables (Markdown, LaTeX, CSV) and figures (PNG)."""
        from kacs_cli.reporting.build import build_report
        from kacs_cli.reporting.files import parse_formats

        formats = parse_formats(fmt)  # a bad --format fails before any reading
        summary = build_report(results_dir, out_dir=out, formats=formats, paper=paper, figures=figures,
                               control=control)
        typer.echo(summary.console_markdown)
        if summary.skipped:
            typer.echo("\nskipped (no experiment inside):")
            for line in summary.skipped:
                typer.echo(f"  - {line}")
        if summary.missing:
            typer.echo("\nmissing (reported over what is there):")
            for line in summary.missing:
                typer.echo(f"  - {line}")
        typer.echo(f"\nwrote {len(summary.files)} file(s) to {summary.out_dir}:")
        for path in summary.files:
            typer.echo(f"  {path}")
