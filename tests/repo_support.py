"""Where the checkout's own files are, for the tests that read its configs, docs and results."""

from pathlib import Path

from kacs_cli.experiments.campaign.config import load_config

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"


def project_config(stem: str):
    """The resolved config `configs/<stem>.yaml` as committed."""
    return load_config(CONFIGS / f"{stem}.yaml")
