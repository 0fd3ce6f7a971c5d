"""`kacs fit`, `kacs predict`, `kacs plot-model`: train one model, use it, look at it."""

from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path
from typing import Optional

import typer

from kacs_cli import atomic
from kacs_cli.cli.model_rows import model_rows
from kacs_cli.engine import registry
from kacs_cli.engine.params import ARTICLE_SWITCHES, CODE_SWITCHES, DECLARATIONS, DECLARED, PRESETS
from kacs_cli.errors import UserError
from kacs_cli.scaling import ScaleWarning



def _load_estimator(path: Path):
    from kacs_cli.estimators import load_estimator

    return load_estimator(path)


def _flag_value(name: str, value):
    """A flag's value as the estimator takes it: texts stripped and lower-cased; a setting that
    may be given per input (--channels "n + 1") arrives as text, and a plain number of it stays a
    number."""
    if not isinstance(value, str):
        return value
    value = value.strip().lower()
    return int(value) if DECLARED[name].per_input and value.isdigit() else value


def _fit_options(method, options, switches, preset_name) -> dict:
    """The declared hyperparameters `kacs fit` passes on: the flags given (an option left out is
    None, so a flag given at its default value still counts), the switches it turns on, and the
    preset beneath them."""
    given = {name: _flag_value(name, value) for name, value in (options or {}).items() if value is not None}
    for switch in switches:
        name = switch.strip().lower()
        if name not in (*ARTICLE_SWITCHES, *CODE_SWITCHES):
            raise UserError(f"--switch must be one of {', '.join((*ARTICLE_SWITCHES, *CODE_SWITCHES))}, "
                            f"got {switch!r}")
        given[name] = True
    if preset_name is not None:
        return {**registry.preset(preset_name.strip().lower(), method), **given}
    return given


# Added to the refusal of text in a CSV read without --categorical ({index}: its 0-based column).
TEXT_HINT = ("; if column {index} holds categories, pass --categorical {index} (0-based column indices or header "
             "names; a header row is then read too)")


def _weight_index(text: str | None, names: list[str] | None = None) -> int | None:
    """--weight-column as a column index (None: not given); `names`: the header row's names,
    when the data have one (a CSV read with --categorical), by which the column may be named."""
    if text is None:
        return None
    value = text.strip()
    if value.isdigit():
        return int(value)
    if names is not None and value in names:
        return names.index(value)
    if names is not None:
        raise UserError(f"--weight-column must be the 0-based index of a column of the data (the first column "
                        f"is 0) or the name of an input in its header row ({', '.join(names)}), got {text!r}")
    raise UserError(f"--weight-column must be the 0-based index of a column of the data (the first column "
                    f"is 0; the file has no header to name columns by), got {text!r}")


def _fit(data, method, out, iterations, seed, p_hash, data_dir, options=None, passes=None, preset_name=None,
         switches=(), jobs=None, categorical=None, weight_column=None):
    """`kacs fit`; `options`: the declared hyperparameters that have a flag, by name; `categorical`:
    --categorical as given; `weight_column`: the text of --weight-column (None: unweighted)."""
    import numpy as np

    from kacs_cli import baselines
    from kacs_cli.engine import default_p_hash
    from kacs_cli.estimators import estimator_class
    from kacs_cli.estimators.validation import fit_iterations
    from kacs_cli.experiments.data import datasets

    method = method.strip().lower()
    if method not in registry.names() and baselines.find(method) is not None:
        # A baseline has no model file (docs/baselines.md): it runs in campaigns only.
        raise UserError(f"--method {method} is a baseline, which kacs run fits (a config with methods: "
                        f"[{method}]), not kacs fit; kacs fit takes {', '.join(registry.names())}")
    if method not in registry.names():
        raise UserError(f"--method must be one of {', '.join(registry.names())}, got {method!r}")
    if iterations < 1:
        raise UserError(f"--iterations must be a whole number >= 1, got {iterations}")
    if seed < 0:
        raise UserError(f"--seed must be a non-negative integer, got {seed}")
    if jobs is not None and jobs < 1 and jobs != -1:
        raise UserError(f"--jobs must be a whole number >= 1 or -1 (every core), got {jobs}")
    out = atomic.output_file(out, example="model.kacs")
    if categorical is None:
        X, y = datasets.load_dataset(data, data_dir, text_hint=TEXT_HINT)
        columns = ()
    else:
        X, y, columns = datasets.load_categorical(data, datasets.categorical_spec(categorical), data_dir)
    header = ([str(c) for c in X.columns]
              if hasattr(X, "columns") and all(isinstance(c, str) for c in X.columns) else None)
    column = _weight_index(weight_column, header)
    weight = None
    original = list(range(X.shape[1]))  # each input's column in the file
    if column is not None:
        if column in columns:
            raise UserError(f"--weight-column {weight_column}: column {column} is categorical (--categorical); "
                            f"the weights must be a column of numbers")
        X, weight = datasets.weight_column(X, column, data)
        columns = tuple(j - (j > column) for j in columns)
        original = [k for k in original if k != column]
    if p_hash is None:
        p_hash = default_p_hash(datasets.is_real_world(data))
    cls = estimator_class(method)
    options = _fit_options(method, options, switches, preset_name)
    for name, value in options.items():
        if value != DECLARED[name].default and not registry.takes(method, name):
            flag = DECLARED[name].flag or f"--switch {name}"
            raise UserError(f"{flag}: {name} exists only for {', '.join(registry.takers(name))}, "
                            f"not {method.upper()}")
    # A setting left at its default that the learner does not act on is no parameter of its estimator.
    est = cls(n_iter=iterations, n_passes=passes, random_state=seed, P_hash=float(p_hash), n_jobs=jobs,
              categorical_features=list(columns) or None,
              **{name: value for name, value in options.items() if registry.takes(method, name)})
    est.hyperparameters()  # the settings' own one-line errors, before any training
    if passes is not None:
        if not passes > 0:
            raise UserError(f"--passes must be a number > 0, got {passes:g}")
        iterations = fit_iterations(iterations, passes, X.shape[0] if weight is None else int((weight > 0).sum()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ScaleWarning)
        est.fit(X, y, sample_weight=weight)
    for warning in caught:  # one line each, as the command line's errors (no source line)
        if issubclass(warning.category, ScaleWarning):
            typer.echo(f"warning: {data}: {warning.message}", err=True)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    # Like `kacs run --out`, a missing folder is created (only now: bad data leaves no folder).
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the folder {out.parent}: {exc.strerror or exc}") from None
    pred = est.predict(X)
    # With weights, the mean is weighted (rows of weight 0 count for nothing), as in the fit.
    mae = float(np.average(np.abs(pred - y), weights=weight))
    mae_scaled = float(np.average(np.abs(est.scale_target(pred) - est.scale_target(y)), weights=weight))
    est.save(out)
    weighted = ""
    if weight is not None:
        dropped = int((weight == 0).sum())
        weighted = f", weighted by column {column}" + (f" ({dropped} rows of weight 0 left out)" if dropped else "")
    typer.echo(
        f"{method.upper()} fitted on {data}: {X.shape[0]} rows x {X.shape[1]} inputs{weighted}, "
        f"{iterations} iterations, seed {seed}, P_hash {p_hash:g}"
    )
    settings = "" if est.input_transform == "minmax" else f", inputs {est.input_transform}"
    if columns:
        info = datasets.lookup(data)
        names = [str(X.columns[j]) if hasattr(X, "columns") else info.columns[original[j]] if info
                 else str(original[j]) for j in columns]
        settings += ", categorical inputs " + ", ".join(
            f"{name} ({len(c)} categories)" for name, c in zip(names, est.categories_.categories))
    channels = getattr(est, "channels", 0)  # an estimator has the parameters its learner acts on
    searched_channels = est.capacity == "search" and est.capacity_result_.chosen_channels is not None
    if channels and not searched_channels:
        settings += f", {est.model_.n_channels} outer channels"
        settings += f" ({channels})" if isinstance(channels, str) else ""
    if est.capacity == "search":
        c = est.capacity_result_
        tried = (', '.join(map(str, c.candidates)) if not searched_channels else
                 ', '.join(f"{N} at {m} channels" for N, m in zip(c.candidates, c.channels)))
        judged = f" on {est.capacity_folds} folds" if est.capacity_folds > 1 else ""
        settings += f", capacity search{judged}: N = {c.chosen_N}"
        settings += f" at {c.chosen_channels} outer channels" if searched_channels else ""
        settings += f" of {tried}"
        settings += "" if c.chosen_smoothness is None else f", smoothness {c.chosen_smoothness:g}"
        settings += f" ({c.seconds:.1f} s)"
    if est.bags > 1:
        settings += f", {est.bags} bags on bootstrap samples averaged" + (
            f" into one model of {est.model_.n_channels} channels" if est.model_.learner.channels else "")
    if getattr(est, "refinement", False) and hasattr(est, "refine_result_"):
        r = est.refine_result_
        settings += (f", refined ({r.iterations} L-BFGS-B iterations, kept {r.best_iteration}, "
                     f"{r.validation_rows} validation rows, {r.seconds:.1f} s)")
    typer.echo(
        f"rules {est.n_rules_} (micro {est.n_micro_}), parameters {est.n_params_}; train MAE "
        f"{mae:.6g} ({mae_scaled:.6g} on the [-1, 1] target scale){settings}"
    )
    typer.echo(f"saved to {out}")


def _compact(model_path, data, out, method, rules, tolerance, data_dir):
    import numpy as np

    from kacs_cli.experiments.data import datasets

    est = _load_estimator(model_path)
    if not hasattr(est, "compact"):
        raise UserError(f"{model_path} holds no estimator (a bare engine model): compact needs a "
                        f"model file written by `kacs fit` or an estimator's save()")
    out = Path(out).expanduser()
    if out.is_dir():
        raise UserError(f"--out {out} is a directory; give a file name such as {out / 'compact.kacs'}")
    if getattr(est, "categories_", None) is not None and datasets.lookup(data) is None:
        X, y = model_rows(data, est, model_path, with_target=True)
    else:
        X, y = datasets.load_dataset(data, data_dir)
    if X.shape[1] != est.n_features_in_:
        raise UserError(f"{data}: {X.shape[1]} input columns (target last), but the model in "
                        f"{model_path} takes {est.n_features_in_} inputs")
    compacted = est.compact(X, y, method=method.strip().lower(), rules=rules, tolerance=tolerance)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the folder {out.parent}: {exc.strerror or exc}") from None
    compacted.save(out)
    r = compacted.compaction_result_

    def mae(model):
        return float(np.mean(np.abs(model.scale_target(model.predict(X)) - model.scale_target(y))))

    how = f", tolerance {r.tolerance:.3g}" if r.method == "piecewise" else ""
    typer.echo(f"{r.method} compaction of {model_path}: {r.rules_before} -> {r.rules_after} rules "
               f"({100 * r.rules_after / max(r.rules_before, 1):.1f} %){how}, {r.seconds:.1f} s")
    typer.echo(f"MAE on {data} ([-1, 1] target scale): {mae(est):.6g} before, {mae(compacted):.6g} after")
    typer.echo(f"saved to {out}")


def _predict(model_path, data, out):
    import numpy as np

    est = _load_estimator(model_path)
    X, y = model_rows(data, est, model_path)
    pred = est.predict(X)
    lines = "".join(f"{float(v)!r}\n" for v in pred)
    if out is not None:
        out = atomic.output_file(out, example="predictions.txt")
        atomic.make_dirs(out.parent)  # as `kacs fit --out`: a missing folder is created
        atomic.write_text(out, lines)
        typer.echo(f"wrote {len(pred)} predictions to {out}")
    else:
        sys.stdout.write(lines)
        sys.stdout.flush()
    known = None if y is None else ~np.isnan(y)
    if known is not None and known.any():
        pred, y = pred[known], y[known]
        mae = float(np.mean(np.abs(pred - y)))
        scaled = float(np.mean(np.abs(est.scale_target(pred) - np.clip(est.scale_target(y), -1.0, 1.0))))
        rows = "" if known.all() else f", on the {int(known.sum())} rows where it is known"
        # To stderr when the predictions go to stdout, so that they stay pipeable.
        typer.echo(f"MAE {mae:.6g} against the last column ({scaled:.6g} on the [-1, 1] target "
                   f"scale, targets clipped{rows})", err=out is None)


def _plot(model_path, out, points):
    from kacs_cli.estimators import load, plot_kacs_functions

    if points < 2:
        raise UserError(f"--points must be >= 2, got {points}")
    obj = load(model_path)
    model = getattr(obj, "model_", obj)
    if model.learner.components is None:
        raise UserError(
            f"{model_path} holds an {model.learner.label} model; plot-model draws the one-dimensional functions "
            f"of KACS models only (XCSF rules are n-dimensional boxes: inspect them with rules_)"
        )
    out = Path(out).expanduser() if out is not None else Path(model_path).with_suffix(".png")
    atomic.output_file(out, example="model.png")  # a missing folder is created, as by `kacs fit`
    if out.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise UserError(f"--out {out}: use a .png, .pdf or .svg file name")
    plot_kacs_functions(obj, out, points=points)
    n, n_q = model.n, model.n_channels
    typer.echo(
        f"drew {n * n_q} inner and {n_q} outer functions of {model_path} "
        f"({model.n_rules} rules) to {out}"
    )


FIT_OPTIONS = tuple(d for d in DECLARATIONS if d.flag)


def _flag_help(declared) -> str:
    """A declared option's help, after the flag that switches it on, else the learners it is for."""
    switch = DECLARED.get(declared.switch)
    if switch is not None and switch is not declared and switch.flag:
        return f"{switch.flag}: {declared.help}."
    takers = registry.takers(declared.name)
    if len(takers) < len(registry.names()):
        return f"{', '.join(takers)}: {declared.help}."
    return f"{declared.help}."


def _with_declared_options(command) -> inspect.Signature:
    """`command`'s signature with its **declared replaced by one option per FIT_OPTIONS entry."""
    fixed = [p for p in inspect.signature(command).parameters.values() if p.kind != p.VAR_KEYWORD]
    annotations = {int: int, float: float, bool: bool}
    # Each option defaults to None, its declared default shown in the help: a flag given at its
    # default value is then told apart from one left out, and overrides a preset.
    added = [inspect.Parameter(d.name, inspect.Parameter.KEYWORD_ONLY,
                               default=typer.Option(None, d.flag, help=_flag_help(d),
                                                    show_default=False if d.kind is bool else str(d.default)),
                               annotation=Optional[str if d.choices or d.per_input else annotations[d.kind]])
             for d in FIT_OPTIONS]
    return inspect.Signature([p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in fixed] + added)


def register(app: typer.Typer) -> None:
    def fit_command(
        data: str = typer.Argument(
            ..., help="Headerless numeric CSV (inputs, target last; text and a header row with --categorical) "
                      "or a dataset name (f1..f4, asn, ...).",
            show_default=False),
        out: Path = typer.Option(..., "--out", "-o", help="Model file to write, e.g. model.kacs.",
                                 show_default=False),
        method: str = typer.Option("kacs", "--method", "-m",
                                   help="The learner: kacs, xcsf, or one added to engine/registry.py."),
        iterations: int = typer.Option(100_000, "--iterations", "-n", help="Training iterations (samples)."),
        passes: Optional[float] = typer.Option(
            None, "--passes", help="Instead of --iterations: this many passes over the rows "
                                   "(iterations = passes x rows; 150 suits most data, docs/refinement.md).",
            show_default=False),
        seed: int = typer.Option(0, "--seed", help="Learner seed."),
        p_hash: Optional[float] = typer.Option(
            None, "--P-hash", "--p-hash",
            help="Covering probability of a full-range interval (default: 0.0 for f1-f4, 0.8 for "
                 "real-world data and user CSVs, as in the article).", show_default=False),
        data_dir: Optional[Path] = typer.Option(
            None, "--data-dir", help="Folder of the named datasets (default $KACS_DATA_DIR, else datasets/)."),
        preset_name: Optional[str] = typer.Option(
            None, "--preset", help=f"Start from a named setting ({', '.join(PRESETS)}: quantile inputs, "
                                   f"refinement, a capacity search and n + 1 channels; docs/capacity.md); the options "
                                   f"below, where given, override it.", show_default=False),
        switch: list[str] = typer.Option(
            [], "--switch", help="Turn one difference between prose and code on, e.g. article_mutation "
                                 "(repeatable; docs/algorithm.md, \"Two semantics\").", show_default=False),
        jobs: Optional[int] = typer.Option(
            None, "--jobs", "-j", help="Processes that train the capacity search's candidates and the bags of "
                                       "--bags at once (default 1; -1: every core); the model is the same "
                                       "whatever their number.", show_default=False),
        categorical: Optional[str] = typer.Option(
            None, "--categorical", help="Inputs whose values are categories, as 0-based column indices or header "
                                        "names separated by commas (e.g. color,cut); they may hold text, and the "
                                        "CSV may then start with a header row. Each category is placed on its "
                                        "input's axis by its mean target (docs/algorithm.md section 12).",
            show_default=False),
        weight_column: Optional[str] = typer.Option(
            None, "--weight-column", help="0-based index of a column of DATA holding each row's sample weight "
                                          "(a number >= 0; rows of weight 0 are left out; docs/algorithm.md "
                                          "section 12), or its name in the header row a CSV read with "
                                          "--categorical has; it is no input then.", show_default=False),
        **declared,
    ) -> None:
        """Train KACS or XCSF on a whole dataset and save the model (inputs and target are min-max scaled)."""
        options = {d.name: declared.pop(d.name) for d in FIT_OPTIONS}
        _fit(data, method, out, iterations, seed, p_hash, data_dir, options, passes, preset_name, switch, jobs,
             categorical, weight_column)

    # Every declared hyperparameter with a flag (engine/params.py) is an option of `kacs fit`,
    # with its declared default and help: typer reads the options from the signature.
    fit_command.__signature__ = _with_declared_options(fit_command)
    fit_command.__annotations__ = {p.name: p.annotation for p in fit_command.__signature__.parameters.values()}
    app.command("fit")(fit_command)

    @app.command("compact")
    def compact_command(
        model: Path = typer.Argument(..., help="A KACS model file written by `kacs fit`.", show_default=False),
        data: str = typer.Option(
            ..., "--data", help="The rows the model was trained on (or like them): a headerless numeric "
                                "CSV with the target last, or a dataset name.", show_default=False),
        out: Path = typer.Option(..., "--out", "-o", help="Compacted model file to write.", show_default=False),
        method: str = typer.Option("piecewise", "--method",
                                   help="piecewise (line pieces per function, refitted) or single-winner."),
        rules: float = typer.Option(0.1, "--rules", help="piecewise: keep at most this share of the rules."),
        tolerance: float = typer.Option(
            0.0, "--tolerance", help="piecewise: this absolute tolerance on the [-1, 1] target scale "
                                     "instead of a rule budget (0: use --rules)."),
        data_dir: Optional[Path] = typer.Option(
            None, "--data-dir", help="Folder of the named datasets (default $KACS_DATA_DIR, else datasets/)."),
    ) -> None:
        """Compact a KACS model to a few rules per learned function (docs/compaction.md)."""
        _compact(model, data, out, method, rules, tolerance, data_dir)

    @app.command("predict")
    def predict_command(
        model: Path = typer.Argument(..., help="A model file written by `kacs fit`.", show_default=False),
        data: Path = typer.Argument(
            ..., help="Headerless numeric CSV with n input columns, or n + 1 with the target last (a model "
                      "with categorical inputs: text in their columns, and a header row, as in training), "
                      "or a dataset name (f1..f4, asn, ...).",
            show_default=False),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", help="Write the predictions here (one per line) instead of printing them."),
    ) -> None:
        """Predict every row of DATA in the target's original units; with a target column, report the MAE."""
        _predict(model, data, out)

    @app.command("plot-model")
    def plot_model_command(
        model: Path = typer.Argument(..., help="A KACS model file written by `kacs fit`.", show_default=False),
        out: Optional[Path] = typer.Option(
            None, "--out", "-o", help="Image to write (.png, .pdf, .svg; default: MODEL with .png)."),
        points: int = typer.Option(200, "--points", help="Sample points per function."),
    ) -> None:
        """Draw every learned function of a KACS model: inner psi_{q,p} and outer Phi_q, one small plot each."""
        _plot(model, out, points)
