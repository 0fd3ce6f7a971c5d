"""The programmatic configs of `kacs scale`: sweeps over the input dimension or the sample size."""

from __future__ import annotations

from typing import Any

from kacs_cli.errors import UserError
from kacs_cli.experiments.data.benchmarks import DEFAULT_N, DEFAULT_SAMPLES
from kacs_cli.experiments.campaign.cells import DEFAULT_N_BUDGET
from kacs_cli.experiments.campaign.methods import guideline_budget


def parse_int_list(text: str, what: str, *, default_step: str) -> list[int]:
    """'2,4,8' -> [2, 4, 8]; 'a..b' -> a default progression; 'a..b..s' step s, 'a..b..x2' doubling.

    `default_step` is "+2"-style (arithmetic) or "x2"-style (geometric); used for 'a..b'.
    """
    text = str(text).strip()
    bad = (f"{what}: expected a list such as 2,4,8 or a range a..b (step {default_step.lstrip('+')}) "
           f"or a..b..step (e.g. 2..20..4, 125..8000..x2), got {text!r}")
    if ".." not in text:
        try:
            values = [int(t) for t in text.split(",") if t.strip()]
        except ValueError:
            raise UserError(bad) from None
        if not values:
            raise UserError(bad)
    else:
        parts = text.split("..")
        if len(parts) not in (2, 3):
            raise UserError(bad)
        step = parts[2].strip() if len(parts) == 3 else default_step
        try:
            start, stop = int(parts[0]), int(parts[1])
            geometric = step.lower().startswith(("x", "*"))
            k = int(step.lstrip("xX*+"))
        except ValueError:
            raise UserError(bad) from None
        if start > stop or k < (2 if geometric else 1):
            raise UserError(f"{bad}: need start <= stop and a step >= 1 (factor >= 2)")
        values, v = [], start
        while v <= stop:
            values.append(v)
            v = v * k if geometric else v + k
    if len(set(values)) != len(values):
        raise UserError(f"{what}: {text!r} lists a value twice")
    return values


def scaling_raw_config(
    *,
    dims: list[int] | None = None,
    sample_sizes: list[int] | None = None,
    function: str = "f3",
    guideline: bool = False,
    n: int = DEFAULT_N,
    samples: int = DEFAULT_SAMPLES,
) -> dict:
    """The config mapping behind `kacs scale`: one generated cell per n or per sample size."""
    if (dims is None) == (sample_sizes is None):
        raise UserError("choose one sweep: --dim (input dimension n) or --samples (sample size)")
    benchmarks = []
    if dims is not None:
        experiment = "dim_scaling"
        for d in dims:
            entry: dict[str, Any] = {"name": function, "source": "generated", "n": d, "samples": samples}
            if guideline:
                entry["N"] = max(DEFAULT_N_BUDGET, guideline_budget(d))
            benchmarks.append(entry)
    else:
        experiment = "sample_scaling"
        for s in sample_sizes or []:
            entry = {"name": function, "source": "generated", "n": n, "samples": s}
            if guideline:
                entry["N"] = max(DEFAULT_N_BUDGET, guideline_budget(n))
            benchmarks.append(entry)
    return {"experiment": experiment, "benchmarks": benchmarks, "protocol": {"name": "main"}}
