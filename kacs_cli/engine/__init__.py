"""The numba learning engines of KACS and XCSF and the training driver."""

from kacs_cli.engine.cache import drop_stale_cache

# Before any engine function loads its cached machine code (see engine/cache.py).
drop_stale_cache()

from kacs_cli.engine.params import Hyperparameters, default_p_hash
from kacs_cli.engine import registry
from kacs_cli.engine.learner import Learner
from kacs_cli.engine.train import CURVE_COLUMNS, Model, TrainResult, train_run

__all__ = ["CURVE_COLUMNS", "Hyperparameters", "Learner", "Model", "TrainResult", "registry",
           "default_p_hash", "train_run"]
