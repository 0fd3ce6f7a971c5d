"""Each hyperparameter is declared once (kacs_cli/engine/params.py): a declaration added there
appears, validated, in the dataclass, the engine's tuple (when the engine reads it), the config
schema, `kacs fit`, the model file's fields and the generic estimator constructor. The explicit
constructors of KACSRegressor and XCSFRegressor take it once it is written into the one of each
learner that acts on it (tests/test_estimator_signatures.py holds them to the declarations)."""

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kacs_cli
from kacs_cli.engine.params import DECLARATIONS, DECLARED, EngineHyperparameters, Hyperparameters

PACKAGE = Path(kacs_cli.__file__).resolve().parent
HYPOTHETICAL = ('    D("wobble", float, 0.5, "a hypothetical knob", needs="refine", engine=False, '
                'switch="wobble", flag="--wobble", valid=_UNIT, why=_RATE),\n')
# ... and its parameter in KACSRegressor's constructor, in the declared order (before compaction).
KACS_PARAMETER = (' ' * 17 + 'compaction: str = "none",', ' ' * 17 + 'wobble: float = 0.5, compaction: str = "none",')


def test_every_declaration_is_a_field_of_the_dataclass_in_order():
    assert Hyperparameters.names() == tuple(d.name for d in DECLARATIONS)
    assert all(getattr(Hyperparameters(), d.name) == d.default for d in DECLARATIONS)
    assert EngineHyperparameters._fields == tuple(d.name for d in DECLARATIONS if d.engine)


def test_a_switch_hides_its_settings_from_a_resolved_config_while_it_is_off():
    assert "refine_pull" not in Hyperparameters().as_dict()
    on = Hyperparameters(refinement=True).as_dict()
    assert on["refinement"] is True and on["refine_pull"] == DECLARED["refine_pull"].default


@pytest.mark.slow
def test_a_hypothetical_declaration_reaches_every_front_end(tmp_path):
    """Copy the package, add one declaration to params.py (and its parameter to the constructor
    of KACS, the learner that acts on it), and use it from each front end in a fresh interpreter
    (nothing is trained)."""
    copy = tmp_path / "kacs_cli"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    params = copy / "engine" / "params.py"
    text = params.read_text()
    anchor = "    # Compaction after training"
    assert anchor in text
    params.write_text(text.replace(anchor, HYPOTHETICAL + anchor, 1))
    regressors = copy / "estimators" / "regressors.py"
    text = regressors.read_text()
    assert text.count(KACS_PARAMETER[0]) == 2  # KACS's constructor first, then XCSF's
    regressors.write_text(text.replace(*KACS_PARAMETER, 1))
    script = textwrap.dedent('''
        import inspect, sys
        from typer.testing import CliRunner
        from kacs_cli import KACSRegressor, XCSFRegressor
        from kacs_cli.estimators import LearnerRegressor
        from kacs_cli.cli import app
        from kacs_cli.engine.params import Hyperparameters
        from kacs_cli.errors import UserError
        from kacs_cli.experiments.campaign.methods import hyperparameter_overrides
        import contextlib, io
        from kacs_cli.cli import main

        assert inspect.signature(KACSRegressor).parameters["wobble"].default == 0.5
        assert KACSRegressor(wobble=0.25).get_params()["wobble"] == 0.25
        assert "wobble" in KACSRegressor._parameter_constraints
        assert "wobble" not in inspect.signature(XCSFRegressor).parameters  # XCSF has no refinement
        assert "wobble" not in XCSFRegressor._parameter_constraints and "wobble" not in XCSFRegressor.__doc__
        assert "wobble : float, default=0.5" in KACSRegressor.__doc__
        class Generic(LearnerRegressor):  # the generic constructor: every declaration
            pass
        assert inspect.signature(Generic).parameters["wobble"].default == 0.5
        try:
            KACSRegressor(wobble=2.0).hyperparameters()
        except UserError as exc:
            print("estimator:", exc)
        try:
            KACSRegressor(wobble=2.0, n_iter=10).fit([[0.0], [1.0]], [0.0, 1.0])
        except UserError as exc:
            print("fit:", exc)
        assert Hyperparameters(wobble=0.25).as_dict()["wobble"] == 0.25
        assert "wobble" not in Hyperparameters().as_dict()
        assert hyperparameter_overrides({"wobble": 0.25}, "methods.kacs") == {"wobble": 0.25}
        try:
            hyperparameter_overrides({"wobble": "x"}, "methods.kacs")
        except UserError as exc:
            print("config:", exc)
        help_text = CliRunner().invoke(app, ["fit", "--help"], terminal_width=200).output
        assert "--wobble" in help_text and "a hypothetical knob" in help_text, help_text
        open("d.csv", "w").write("".join(f"{i},{i % 3},{i * 0.5}\\n" for i in range(20)))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                main(["fit", "d.csv", "--out", "m.kacs", "--wobble", "3"])
            except SystemExit as exc:
                print("cli:", exc.code, err.getvalue().strip())
        ''')
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(": ", 1) for line in done.stdout.strip().splitlines())
    assert lines["estimator"] == "hyperparameter wobble = 2.0 is invalid: a probability or rate must lie in [0, 1]"
    assert lines["fit"] == ("The 'wobble' parameter of KACSRegressor must be a float in the range [0.0, 1.0]. "
                            "Got 2.0 instead.")
    assert lines["config"].startswith("methods.kacs.wobble: must be a number"), lines["config"]
    assert lines["cli"].startswith("2 ") and "wobble" in lines["cli"], lines["cli"]
