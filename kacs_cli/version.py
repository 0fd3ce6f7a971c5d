"""The package version, in a module of its own: model files record it, and the estimators
layer must not import the package's public facade (kacs_cli/__init__.py) to read it."""

__version__ = "0.1.0"
