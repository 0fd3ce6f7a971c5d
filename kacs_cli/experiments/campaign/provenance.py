"""What produced a results folder's rows: the engine fingerprint, the BLAS kernels, the commit.

A run's numbers are fixed by its config and seeds *and* by the code and the numeric kernels
that computed them. The folder's engine.yaml (results.py writes and reads it) records them,
so that rows of two engines never mix silently: the runner refuses to resume a folder, and
`reuse:` to copy a folder's rows, whose record names another engine than the running one
(`same_engine`), unless --allow-engine-change.

- The fingerprint is the sha256 of the sources of the engine (kacs_cli/engine: the learners)
  and the baselines (kacs_cli/baselines), the same digest that keys numba's cache
  (kacs_cli/engine/cache.py): every edit of those files changes it, any other file does not.
  The engine's environment switch (plain numba) is mixed in when on, so a folder resumed
  under another setting is refused like one of another engine.
- The KACS engine's name (`kacs_engine`: layout.ENGINE_NAME) says which of KACS's engines
  trained the rows, in words a reader of the results index can follow; a record without
  one names the engine that re-sorted the population by submodel every 100 iterations
  (RESORTING), or, with the switch KACS_ENGINE=sorted among its switches, the sorted one.
  Likewise XCSF's (`xcsf_engine`: xcsf.ENGINE_NAME); a record without one names the engine
  that summed the fitness of every slot after each update (FULL_SUM).
- The refinement's kernel (`refinement`: refine.ENGINE_NAME), which fits a refined KACS
  model's weights; a record without one names the kernel that scanned every outer rule whose
  lower bound lies below a channel sum (SCAN). The two round a few sums differently, which
  L-BFGS-B's stopping turns into other weights.
- The kernels are threadpoolctl's report of the BLAS libraries numpy and scipy load. Their
  family (library, version, the architecture whose kernels the library chose: OpenBLAS picks
  Haswell or SkylakeX at run time) is compared; their thread count is not, since the numbers
  do not depend on it.
- The commit (`git rev-parse HEAD`, and whether tracked files differ from it) is recorded,
  never compared: it changes with every edit of the documents.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Imported for their BLAS libraries, which threadpoolctl lists only once they are loaded.
import numpy  # noqa: F401
import scipy.linalg  # noqa: F401
from threadpoolctl import threadpool_info

from kacs_cli.engine import cache, layout, refine, xcsf
from kacs_cli.errors import UserError
from kacs_cli.experiments.campaign import results

PACKAGE_DIR = Path(cache.__file__).resolve().parents[1]
# The subpackages whose sources compute a run's numbers (the data and protocols are pinned
# by the config's identity instead).
ENGINE_PACKAGES = ("engine", "baselines")
# What the record keeps of each library of threadpoolctl's report; its path names a machine's
# folders and its thread count changes no number.
KERNEL_KEYS = ("user_api", "internal_api", "prefix", "version", "architecture")
# The part of a BLAS library that changes numbers.
FAMILY_KEYS = ("internal_api", "version", "architecture")
FINGERPRINT_SHOWN = 12
# The KACS engine of records that name none, and the switch that once selected the sorted one.
RESORTING = "re-sorting"
SORTED_SWITCH = "KACS_ENGINE=sorted"
# The XCSF engine of records that name none.
FULL_SUM = "full-sum"
# The refinement kernel of records that name none.
SCAN = "scan"
# engine.yaml's field of each engine a record names: KACS's, XCSF's, the refinement's.
ENGINE_FIELDS = {"kacs": "kacs_engine", "xcsf": "xcsf_engine", "refinement": "refinement"}


def engine_switches() -> tuple[str, ...]:
    """The engine's environment switches that are on ("KACS_PLAIN_NUMBA=nrt"): they change
    which code computes a run (plain numba moves no number but is another compilation, named
    by the kinds it drops) without changing a source, so the fingerprint names them."""
    on = []
    plain = cache.plain_label()
    if plain:
        on.append(f"{cache.PLAIN_SWITCH}={plain}")
    return tuple(on)


def engine_fingerprint(package_dir: Path = PACKAGE_DIR) -> str:
    """The sha256 of ENGINE_PACKAGES' sources in `package_dir` (default: this package), with
    the switches that are on (`engine_switches`) mixed in; with none on, the sources' digest."""
    digest = cache.sources_digest(*(Path(package_dir) / name for name in ENGINE_PACKAGES))
    switches = engine_switches()
    if not switches:
        return digest
    return hashlib.sha256(" ".join((digest, *switches)).encode()).hexdigest()


def kernel_report() -> list[dict]:
    """threadpoolctl's report of the libraries numpy and scipy load, KERNEL_KEYS of each, in
    a fixed order (the report's follows the order the libraries were loaded in)."""
    kernels = [{k: info[k] for k in KERNEL_KEYS if info.get(k) is not None} for info in threadpool_info()]
    return sorted(kernels, key=lambda k: [str(k.get(key, "")) for key in KERNEL_KEYS])


def kernel_family(kernels: list[dict]) -> tuple[str, ...]:
    """The BLAS libraries of a kernel report as "openblas 0.3.30 SkylakeX", sorted, each once."""
    return tuple(sorted({" ".join(str(k.get(key, "?")) for key in FAMILY_KEYS)
                         for k in kernels if isinstance(k, dict) and k.get("user_api") == "blas"}))


def checkout_commit(package_dir: Path = PACKAGE_DIR) -> tuple[str | None, bool | None]:
    """(HEAD's commit, whether tracked files differ from it) of the git checkout holding the
    package; (None, None) for an installed package or without git."""
    root = Path(package_dir).parent
    if not (root / ".git").exists():
        return None, None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head or None, bool(status.strip())


@dataclass(frozen=True)
class EngineRecord:
    """A folder's engine.yaml: the engine that produced its rows and, after
    --allow-engine-change let rows of other engines in, those engines' records (`others`)."""

    fingerprint: str
    kernels: tuple[dict, ...]
    commit: str | None = None
    dirty: bool | None = None
    others: tuple[dict, ...] = ()
    # The engine switches that were on (`engine_switches`), written out because the
    # fingerprint only mixes them in: a reader sees which engine trained the rows.
    switches: tuple[str, ...] = ()
    # Which of KACS's and of XCSF's engines trained the rows (see the module's docstring).
    kacs_engine: str = layout.ENGINE_NAME
    xcsf_engine: str = xcsf.ENGINE_NAME
    refinement: str = refine.ENGINE_NAME

    @classmethod
    def current(cls) -> "EngineRecord":
        """The engine running now."""
        commit, dirty = checkout_commit()
        return cls(engine_fingerprint(), tuple(kernel_report()), commit, dirty, switches=engine_switches(),
                   kacs_engine=layout.ENGINE_NAME, xcsf_engine=xcsf.ENGINE_NAME, refinement=refine.ENGINE_NAME)

    @classmethod
    def of(cls, data: dict, where: Path | str) -> "EngineRecord":
        fingerprint, kernels = data.get("fingerprint"), data.get("kernels")
        if not isinstance(fingerprint, str) or not isinstance(kernels, list):
            raise UserError(f"{where} lacks its fingerprint or kernels; restore it, or delete it and the folder "
                            f"counts as one written before the record existed (docs/results-folder.md)")
        others = data.get("others")
        switches = data.get("switches")
        switches = tuple(str(w) for w in switches) if isinstance(switches, list) else ()
        kacs_engine = data.get("kacs_engine")
        if not isinstance(kacs_engine, str):
            kacs_engine = layout.ENGINE_NAME if SORTED_SWITCH in switches else RESORTING
        xcsf_engine = data.get("xcsf_engine")
        if not isinstance(xcsf_engine, str):
            xcsf_engine = FULL_SUM
        refinement = data.get("refinement")
        if not isinstance(refinement, str):
            refinement = SCAN
        return cls(fingerprint, tuple(kernels), data.get("commit"), data.get("dirty"),
                   tuple(o for o in others if isinstance(o, dict)) if isinstance(others, list) else (),
                   switches, kacs_engine, xcsf_engine, refinement)

    def as_dict(self) -> dict:
        out = {"fingerprint": self.fingerprint, "kacs_engine": self.kacs_engine, "xcsf_engine": self.xcsf_engine,
               "refinement": self.refinement, "commit": self.commit, "dirty": self.dirty, "kernels": [dict(k) for k in self.kernels]}
        if self.switches:
            out["switches"] = list(self.switches)
        if self.others:
            out["others"] = [dict(o) for o in self.others]
        return out

    @property
    def family(self) -> tuple[str, ...]:
        return kernel_family(list(self.kernels))

    def same_engine(self, other: "EngineRecord") -> bool:
        """Rows of the two would be the same numbers: same fingerprint and kernel family."""
        return self.fingerprint == other.fingerprint and self.family == other.family

    def describe(self) -> str:
        """One line's worth: "engine 1a2b3c4d5e6f, kernels openblas 0.3.30 SkylakeX"."""
        return f"engine {self.fingerprint[:FINGERPRINT_SHOWN]}, kernels {', '.join(self.family) or 'none'}"

    def entry(self) -> dict:
        """This record as an entry of another's `others`."""
        return {k: v for k, v in self.as_dict().items() if k != "others"}

    def engines(self, which: str) -> tuple[str, ...]:
        """The engines of `which` ("kacs", "xcsf" or "refinement", ENGINE_FIELDS) whose rows the
        folder holds: this record's and its others', each once."""
        field = ENGINE_FIELDS[which]
        names = [getattr(self, field), *(getattr(EngineRecord.of(o, "others"), field) for o in self.others)]
        return tuple(dict.fromkeys(names))

    def joined(self, other: "EngineRecord") -> "EngineRecord":
        """This record, with `other`'s engine (and the engines it names) among the others."""
        # Entries compared as this code writes them: an older entry lacks fields written now.
        known = [EngineRecord.of(o, "others").entry() for o in self.others]
        for record in (other, *(EngineRecord.of(o, "others") for o in other.others)):
            entry = record.entry()
            if not record.same_engine(self) and entry not in known:
                known.append(entry)
        return EngineRecord(self.fingerprint, self.kernels, self.commit, self.dirty, tuple(known), self.switches,
                            self.kacs_engine, self.xcsf_engine, self.refinement)


def read(folder: Path) -> EngineRecord | None:
    """The folder's engine record; None for a folder written before the record existed."""
    data = results.read_engine_record(folder)
    return None if data is None else EngineRecord.of(data, results.engine_path(folder))


def write(folder: Path, record: EngineRecord) -> None:
    results.write_engine_record(folder, record.as_dict())
