"""What the model file's module of the estimators layer imports (the order of imports inside the
layer: test_layer_order.py)."""

from pathlib import Path

import kacs_cli.estimators

from layer_support import imports

LAYER = Path(kacs_cli.estimators.__file__).parent


def test_persistence_knows_the_engine_and_the_file_only():
    # An estimator reaches it only through its _export_state: no import of an estimator,
    # of scikit-learn or of a command.
    imported = {name for name, _ in imports(LAYER / "persistence.py")}
    assert not {name for name in imported
                if name.startswith(("kacs_cli.estimators", "sklearn", "kacs_cli.cli"))}, imported
