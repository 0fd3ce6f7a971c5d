"""Give a results folder written before engine.yaml existed the record of the running engine,
once `kacs reproduce` has shown that this engine gives its rows bit for bit
(docs/results-folder.md, "Folders without a record").

    kacs reproduce FOLDER --runs 2 --out REPRODUCTION
    python tools/record_engine.py FOLDER REPRODUCTION

Refuses a folder that has a record, and a reproduction that is not of FOLDER, was trained by
another engine than the running one, or has a row that differs from the folder's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from kacs_cli.experiments.campaign import provenance, results
from kacs_cli.reporting.reproduce import TABLE_NAME


def problem(folder: Path, reproduction: Path, running: provenance.EngineRecord) -> str | None:
    """Why the running engine's record may not be written into `folder` (None: it may)."""
    if not results.is_results_folder(folder):
        return f"{folder} is not a results folder of `kacs run`"
    if provenance.read(folder) is not None:
        return f"{folder} has its {results.ENGINE_FILE} already"
    table_path = reproduction / f"{TABLE_NAME}.csv"
    if not table_path.is_file():
        return f"{reproduction} holds no {TABLE_NAME}.csv; run `kacs reproduce {folder} --out {reproduction}` first"
    recorded = provenance.read(reproduction)
    if recorded is None or not recorded.same_engine(running):
        return f"{reproduction} was not trained by the running engine ({running.describe()}); reproduce again"
    trained = results.ResolvedConfig.read(reproduction)
    if trained is None or trained.experiment != results.ResolvedConfig.read(folder).experiment:
        return f"{reproduction} is no reproduction of {folder}"
    table = pd.read_csv(table_path)
    short = table[(table["paired"] == 0) | (table["identical"] < table["paired"])]
    if len(short):
        cells = ", ".join(f"{b}/{m}" for b, m in zip(short["benchmark"], short["method"]))
        return f"rows of {cells} are not reproduced bit for bit, so they are not this engine's"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("reproduction", type=Path, help="the --out folder of `kacs reproduce FOLDER`")
    args = parser.parse_args(argv)
    running = provenance.EngineRecord.current()
    why = problem(args.folder, args.reproduction, running)
    if why is not None:
        print(f"error: {why}", file=sys.stderr)
        return 2
    provenance.write(args.folder, running)
    print(f"{results.engine_path(args.folder)}: {running.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
