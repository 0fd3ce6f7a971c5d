"""`kacs run CONFIG` and `kacs scale`: run an experiment campaign (resumable, parallel)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import typer

from kacs_cli.errors import Interrupted, UserError
from kacs_cli.experiments.data.benchmarks import FUNCTIONS

_OUT_HELP = "Output folder (default results/<experiment>). Rerunning into it resumes; finished runs are skipped."
JOBS_HELP = "Parallel worker processes (default: all cores). Results do not depend on it."
DATA_DIR_HELP = "Folder holding the dataset CSVs (default $KACS_DATA_DIR, else the project's datasets/)."
_RUNS_HELP = "Number of runs per benchmark and method (default: the config's protocol runs)."
_ITER_HELP = "Training iterations per run (default: the config's iterations)."
_METHODS_HELP = "Only these methods now, comma-separated (xcsf,kacs); the rest stays to do."
_FORCE_HELP = "Discard earlier results in --out (runner files only) and start over."
_ENGINE_HELP = ("Add rows to --out, or copy `reuse:` rows, though another engine or BLAS kernel family produced "
                "the rows there (its engine.yaml); the folder's engine.yaml then names both.")
_BACKEND_HELP = "local: joblib processes on this machine; dask: the same fan-out on a Dask cluster."
_SCHED_HELP = "Address of a running Dask scheduler (e.g. tcp://host:8786); implies --backend dask. Without it, dask starts a local cluster of --jobs workers."


def _split_list(text: Optional[str]) -> Optional[list[str]]:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    return items or None


def check_positive(value: Optional[int], option: str) -> None:
    if value is not None and value < 1:
        raise UserError(f"{option} must be a whole number >= 1, got {value}")


def _scale_out(option: str, spec: str, function: str, guideline: bool) -> Path:
    """Default folder of `kacs scale`: named after the sweep as typed (--dim 2..4 ->
    results/scale_dim_2-4), apart from configs/dim_scaling.yaml's results/dim_scaling, whose
    cells differ, so that neither refuses the other's folder."""
    sweep = re.sub(r"[^0-9A-Za-z_]+", "-", spec.replace("..", "-").replace(",", "_").replace("*", "x"))
    sweep = re.sub(r"-*_-*", "_", sweep).strip("-_")
    name = f"scale_{option}_{sweep}"
    if function != "f3":
        name += f"_{function}"
    if guideline:
        name += "_guideline"
    return Path("results") / name


def _campaign(config, *, out, jobs, data_dir, force, skip_missing, benchmarks, methods, backend, scheduler,
              allow_engine_change):
    from kacs_cli.cli.campaign import ConsoleReporter
    from kacs_cli.experiments.campaign.runner import run_campaign

    out_dir = Path(out) if out is not None else Path("results") / config.experiment
    try:
        run_campaign(
            config, out_dir, jobs=jobs, data_dir=data_dir, force=force, skip_missing=skip_missing,
            benchmarks=_split_list(benchmarks), methods=_split_list(methods), backend=backend.lower(),
            scheduler=scheduler, allow_engine_change=allow_engine_change, reporter=ConsoleReporter(),
        )
    except Interrupted as exc:
        # The finished runs are saved and runs.csv matches them (runner); main prints the line.
        exc.kept = f"finished runs are kept in {out_dir}; run the same command again to resume"
        raise


def _scale(dim, samples, guideline, function, out, *, jobs, runs, iterations, methods, force, backend,
           scheduler, allow_engine_change):
    """`kacs scale`: the sweep's config, then its campaign."""
    from kacs_cli.experiments.campaign.config import resolve_config
    from kacs_cli.experiments.campaign.sweeps import parse_int_list, scaling_raw_config

    check_positive(jobs, "--jobs")
    check_positive(runs, "--runs")
    check_positive(iterations, "--iterations")
    if (dim is None) == (samples is None):
        raise UserError("choose one sweep: --dim 2..20 (input dimension) or --samples 125..8000 (sample size)")
    function = function.strip().lower()
    if function not in FUNCTIONS:
        raise UserError(f"--function must be one of {', '.join(FUNCTIONS)}, got {function!r}")
    dims = parse_int_list(dim, "--dim", default_step="+2") if dim is not None else None
    sizes = parse_int_list(samples, "--samples", default_step="x2") if samples is not None else None
    raw = scaling_raw_config(dims=dims, sample_sizes=sizes, function=function,
                             guideline=guideline)
    try:
        cfg = resolve_config(raw, runs=runs, iterations=iterations)
    except UserError as exc:
        # Point at the option the user typed rather than the generated config's keys.
        option = "--dim" if dims is not None else "--samples"
        message = str(exc)
        if message.startswith("benchmarks["):
            message = f"{option}: {message.split(': ', 1)[1]}"
        raise UserError(message) from None
    if out is None:
        out = _scale_out("dim" if dims is not None else "samples", dim if dims is not None else samples,
                         function, guideline)
    _campaign(cfg, out=out, jobs=jobs, data_dir=None, force=force, skip_missing=False,
              benchmarks=None, methods=methods, backend=backend, scheduler=scheduler,
              allow_engine_change=allow_engine_change)


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_command(
        config: Path = typer.Argument(..., help="Experiment config (YAML), e.g. configs/main.yaml.", show_default=False),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help=_OUT_HELP),
        jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=JOBS_HELP),
        runs: Optional[int] = typer.Option(None, "--runs", help=_RUNS_HELP),
        iterations: Optional[int] = typer.Option(None, "--iterations", help=_ITER_HELP),
        benchmarks: Optional[str] = typer.Option(
            None, "--benchmarks", help="Only these benchmarks now, comma-separated names or cell labels (f1,asn); the rest stays to do."),
        methods: Optional[str] = typer.Option(None, "--methods", help=_METHODS_HELP),
        data_dir: Optional[Path] = typer.Option(
            None, "--data-dir", help=DATA_DIR_HELP),
        force: bool = typer.Option(False, "--force", help=_FORCE_HELP),
        allow_engine_change: bool = typer.Option(False, "--allow-engine-change", help=_ENGINE_HELP),
        skip_missing: bool = typer.Option(
            False, "--skip-missing", help="Run the benchmarks whose data is present and skip the others (default: stop and list what is missing)."),
        backend: str = typer.Option("local", "--backend", help=_BACKEND_HELP),
        scheduler: Optional[str] = typer.Option(None, "--scheduler", help=_SCHED_HELP),
    ) -> None:
        """Run an experiment from a YAML config: every benchmark x method x run, resumable.

        Writes config.yaml, runs.csv, curves/ and populations/ into --out.

        An interrupted campaign resumes where it stopped; another config is refused there unless --force,
        and rows of another engine (engine.yaml) unless --allow-engine-change.
        """
        from kacs_cli.experiments.campaign.config import load_config

        check_positive(jobs, "--jobs")
        check_positive(runs, "--runs")
        check_positive(iterations, "--iterations")
        cfg = load_config(config, runs=runs, iterations=iterations)
        _campaign(cfg, out=out, jobs=jobs, data_dir=data_dir, force=force, skip_missing=skip_missing,
                  benchmarks=benchmarks, methods=methods, backend=backend, scheduler=scheduler,
                  allow_engine_change=allow_engine_change)

    @app.command("scale")
    def scale_command(
        dim: Optional[str] = typer.Option(
            None, "--dim", help="Sweep the input dimension n of f3 (1000 samples): 2..20 (step 2), 2,4,8 or 2..20..4."),
        samples: Optional[str] = typer.Option(
            None, "--samples", help="Sweep the sample size of f3 (n = 10): 125..8000 (doubling), 125,500 or 125..8000..x4."),
        guideline: bool = typer.Option(
            False, "--guideline", help="Budget guideline N = max(6400, 24 n (2n + 1)) instead of N = 6400."),
        function: str = typer.Option("f3", "--function", help=f"Synthetic function to sweep ({', '.join(FUNCTIONS)})."),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", help="Output folder (default results/scale_dim_<sweep> or results/scale_samples_<sweep>, e.g. results/scale_dim_2-20); rerunning resumes."),
        jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help=JOBS_HELP),
        runs: Optional[int] = typer.Option(None, "--runs", help="Runs per setting and method (default 30, the main protocol)."),
        iterations: Optional[int] = typer.Option(None, "--iterations", help="Training iterations per run (default 100,000)."),
        methods: Optional[str] = typer.Option(None, "--methods", help=_METHODS_HELP),
        force: bool = typer.Option(False, "--force", help=_FORCE_HELP),
        allow_engine_change: bool = typer.Option(False, "--allow-engine-change", help=_ENGINE_HELP),
        backend: str = typer.Option("local", "--backend", help=_BACKEND_HELP),
        scheduler: Optional[str] = typer.Option(None, "--scheduler", help=_SCHED_HELP),
    ) -> None:
        """Scaling experiments on generated data: --dim (n = 2..20) or --samples (125..8000).

        One cell per n or sample size (labels such as f3-n12, f3-s250), main protocol, both methods.

        Same results layout and resume behaviour as `kacs run`.
        """
        _scale(dim, samples, guideline, function, out, jobs=jobs, runs=runs, iterations=iterations,
               methods=methods, force=force, backend=backend, scheduler=scheduler,
               allow_engine_change=allow_engine_change)
