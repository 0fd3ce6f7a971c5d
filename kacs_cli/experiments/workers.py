"""Where the runs of a campaign execute: local worker processes (loky) or a Dask cluster.

Workers only compute (execution.execute_task) and hand each run's output back; the
campaign's parent process writes every file.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import threading
import time
from typing import Iterator

import joblib
from joblib import Parallel, delayed

from kacs_cli.errors import UserError
from kacs_cli.experiments import results
from kacs_cli.experiments.execution import RunSettings, execute_task
from kacs_cli.experiments.tasks import Task

BACKENDS = ("local", "dask")


_PARENT_GUARD: int | None = None  # the campaign pid this worker process already watches


def _die_with_parent(parent_pid: int) -> None:
    """End this worker process as soon as the campaign process `parent_pid` dies, even by SIGKILL.

    Nothing in loky tells a worker that its parent is gone: it holds both ends of its task
    queue's pipe, so it never sees EOF, and it lived on (with the resource trackers, which wait
    for every worker to close their pipe) long after a `kill -9`. On Linux the kernel sends
    the worker PR_SET_PDEATHSIG's SIGKILL the instant the parent dies, whatever the worker is
    doing; a thread polling the parent could not, since a numba run holds the GIL between
    evaluations. The signal follows the thread that forked the worker: loky forks them from
    the campaign's main thread, or from its executor manager thread, which outlives them.
    Elsewhere, or if loky ever starts workers through an intermediate process (PDEATHSIG
    would then watch the wrong one), a daemon thread polls the campaign pid instead.
    """
    global _PARENT_GUARD
    if _PARENT_GUARD == parent_pid:
        return
    _PARENT_GUARD = parent_pid
    direct = os.getppid() == parent_pid
    armed = False
    if direct and sys.platform.startswith("linux"):
        try:
            PR_SET_PDEATHSIG = 1
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False

    def parent_alive() -> bool:
        if direct:  # orphans are adopted by another process
            return os.getppid() == parent_pid
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True

    # The parent may have died before the signal was armed: the worker is an orphan already.
    if not parent_alive():
        os._exit(1)
    if armed:
        return

    def watch() -> None:
        while parent_alive():
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="kacs-parent-watch", daemon=True).start()


def _execute_in_worker(task: Task, settings: RunSettings, parent_pid: int) -> results.RunOutput:
    _die_with_parent(parent_pid)
    return execute_task(task, settings)


def run_local(todo: list[Task], settings: RunSettings, jobs: int) -> Iterator[results.RunOutput]:
    """The runs of `todo`, in the order they finish, on `jobs` local processes (loky)."""
    if jobs == 1:
        for task in todo:
            yield execute_task(task, settings)
        return
    # batch_size=1 keeps the longest-first order meaningful; loky processes sidestep the GIL.
    parallel = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered", batch_size=1)
    parent = os.getpid()
    yield from parallel(delayed(_execute_in_worker)(task, settings, parent) for task in todo)


DASK_MISSING = "--backend dask needs the packages dask and distributed: pip install 'kacs[dask]'"


def require_dask() -> None:
    """A UserError unless the optional dask extra is installed."""
    try:
        import dask.distributed  # noqa: F401  (optional extra: imported only for --backend dask)
    except ImportError:
        raise UserError(DASK_MISSING) from None


def connect_scheduler(scheduler: str):
    """A Client of the running Dask scheduler at `scheduler`, or a UserError.

    Called before the output folder is touched, so that a wrong address leaves nothing behind.
    """
    try:  # the optional dask extra, imported only for --backend dask
        from dask.distributed import Client
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise UserError(DASK_MISSING) from None
    hint = "check the address (e.g. tcp://host:8786) and that the scheduler is running"
    try:
        scheme, location = parse_address(scheduler)
        host_port = parse_host_port(location, 8786) if scheme in ("tcp", "tls") else None
    except (ValueError, TypeError) as exc:
        raise UserError(f"--scheduler {scheduler!r} is not a scheduler address ({exc}); {hint}") from None
    if host_port is not None:
        # A refused connection or an unknown host fails here at once; Client would retry for 20 s.
        try:
            socket.create_connection(host_port, timeout=10).close()
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise UserError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({reason}); {hint}") from None
    try:
        return Client(scheduler, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise UserError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({reason}); {hint}") from None


def run_dask(todo: list[Task], settings: RunSettings, jobs: int, client=None) -> Iterator[results.RunOutput]:
    """Fan out on `client` (connected to a scheduler), or else on a local cluster of `jobs` workers."""
    try:  # the optional dask extra, imported only for --backend dask
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UserError(DASK_MISSING) from None

    cluster = None
    if client is None:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        with joblib.parallel_config(backend="dask"):
            parallel = Parallel(n_jobs=-1, return_as="generator_unordered", batch_size=1)
            yield from parallel(delayed(execute_task)(task, settings) for task in todo)
    finally:
        if cluster is not None:  # a client of a remote scheduler is its caller's to close
            client.close()
            cluster.close()
