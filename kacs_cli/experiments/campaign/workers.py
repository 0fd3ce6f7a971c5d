"""Where the runs of a campaign execute: local worker processes (loky) or a Dask cluster.

Workers only compute (execution.execute_task) and hand each run's output back; the
campaign's parent process writes every file.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import socket
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator

from joblib.externals.loky import get_reusable_executor

try:  # joblib's private module: the thread limits of its workers, used when present
    from joblib._parallel_backends import LokyBackend
except ImportError:
    LokyBackend = None

from kacs_cli.errors import STOP_SIGNALS, Interrupted, UserError
from kacs_cli.experiments.campaign import results
from kacs_cli.experiments.campaign.execution import RunSettings, execute_task
from kacs_cli.experiments.campaign.tasks import Task

BACKENDS = ("local", "dask")
# How long an idle worker process waits for the next run before it exits: joblib's value. loky's
# own 10 s lets a worker quit just as a run is submitted to it ("A worker stopped while some
# jobs were given to the executor").
IDLE_WORKER_S = 300


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


def _ignore_stop_signals() -> None:
    """Leave a stop (Ctrl-C, SIGTERM or SIGHUP to the campaign's process group) to the campaign.

    A worker stopped by such a signal could die halfway through writing its result to the
    pipe that all workers share (a large result is two writes: length, then body); loky's
    manager thread then waits forever for the rest of the message, and the campaign, joining
    that thread, never exits (seen: Ctrl-C to the group, 1 of 9 stops). Ignored here, the
    signal stops the campaign process alone, which saves what finished and shuts the pool
    down, killing its workers from the manager thread while it is not reading. A worker whose
    campaign dies is killed by _die_with_parent."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def _execute_in_worker(task: Task, settings: RunSettings, parent_pid: int) -> results.RunOutput:
    _die_with_parent(parent_pid)
    _ignore_stop_signals()
    return execute_task(task, settings)


class Runs:
    """The runs of a campaign as they finish: iterate for each finished run's output (or None
    when `tick` seconds passed without one, so that the caller can report progress), and
    `stop()` to end early.

    Early ends (Ctrl-C, a signal, a failed write in the parent) lose only the runs in flight:
    `stop()` hands back every run that finished but was not taken yet, for the caller to save,
    and abandons the rest. joblib's generators could not do that: closing one discarded the
    finished results it held ("N tasks have been successfully executed but not used").
    """

    def __iter__(self) -> Iterator[results.RunOutput | None]:
        raise NotImplementedError

    def stop(self) -> list[results.RunOutput]:
        return []

    def running(self) -> dict[str, float]:
        """{run key: seconds since it started} of the runs in flight, where known."""
        return {}

    def close(self) -> None:
        """Release the workers; the runs not taken are lost (call stop() first to keep them)."""


class _InProcess(Runs):
    """--jobs 1: one run after the other in this process (nothing runs beside a run)."""

    def __init__(self, todo: list[Task], settings: RunSettings):
        self.todo, self.settings = todo, settings

    def __iter__(self):
        for task in self.todo:
            yield execute_task(task, self.settings)


def _worker_env(jobs: int) -> dict:
    """The environment joblib's loky backend gives its workers (OMP_NUM_THREADS and the like =
    cores // jobs), so that the worker processes are those the campaigns had under joblib."""
    if LokyBackend is None:  # a joblib without it: the libraries' defaults
        return {}
    try:
        return LokyBackend()._prepare_worker_env(n_jobs=jobs)
    except (AttributeError, TypeError):
        return {}


class _LocalPool(Runs):
    """`jobs` loky worker processes, at most `jobs` runs submitted at a time: none waits in a
    queue, so the longest-first order holds and an early end loses only the runs computing."""

    def __init__(self, todo: list[Task], settings: RunSettings, jobs: int, tick: float | None):
        self.todo, self.settings, self.jobs, self.tick = list(todo), settings, jobs, tick
        self._executor = get_reusable_executor(max_workers=jobs, env=_worker_env(jobs), reuse="auto",
                                                timeout=IDLE_WORKER_S)
        self._pending: set = set()
        self._started: dict = {}
        self._next = 0
        self._stopped = False

    def _fill(self) -> None:
        parent = os.getpid()
        while not self._stopped and len(self._pending) < self.jobs and self._next < len(self.todo):
            task = self.todo[self._next]
            self._next += 1
            future = self._executor.submit(_execute_in_worker, task, self.settings, parent)
            # Never more runs submitted than workers: a run starts when it is submitted.
            self._started[future] = (task.key, time.monotonic())
            self._pending.add(future)

    def running(self) -> dict[str, float]:
        now = time.monotonic()
        return {key: now - start for future, (key, start) in list(self._started.items())
                if future in self._pending}

    def __iter__(self):
        self._fill()
        while self._pending:
            done, _ = wait(self._pending, timeout=self.tick, return_when=FIRST_COMPLETED)
            if not done:
                yield None
                continue
            # One at a time: the caller saves each before the next is taken, so an exception
            # while saving leaves the other finished runs here for stop().
            future = min(done, key=id)
            self._pending.discard(future)
            self._started.pop(future, None)
            self._fill()
            try:
                output = future.result()
            except KeyboardInterrupt:
                # Ctrl-C reaches the workers too (one process group); they ignore it once they
                # have a run (_ignore_stop_signals), but one caught before: the stop the user
                # asked for, not a failed run.
                raise Interrupted(signal.SIGINT) from None
            except BrokenProcessPool:
                # A worker killed, before its first run, by a signal sent to the whole group
                # (a scheduler's SIGTERM): the signal reaches this process too, whose handler
                # then stops the campaign cleanly; give it that moment before reporting a
                # broken pool.
                time.sleep(1.0)
                raise
            yield output

    def stop(self) -> list[results.RunOutput]:
        self._stopped = True
        finished = []
        for future in list(self._pending):
            if future.done() and not future.cancelled() and future.exception() is None:
                finished.append(future.result())
                self._pending.discard(future)
        return finished

    def close(self) -> None:
        self._stopped = True
        if self._pending:
            # Runs still computing are abandoned: their workers are killed rather than left
            # to finish work nobody will save (and to hold the CPU after a Ctrl-C). loky fails
            # their futures itself (cancelling them first crashes its manager thread).
            _forget_queued_work_ids(self._executor)
            self._executor.shutdown(wait=True, kill_workers=True)
            self._pending.clear()


def _forget_queued_work_ids(executor) -> None:
    """Empty loky's queue of submitted work ids before a shutdown that kills the workers.

    A run submitted just before a stop may still have its id in that queue, not yet handed to
    a worker. Shutting down with kill_workers drops every pending work item but leaves the
    ids (loky 3.6; CPython's own executor drains them), and a manager thread that takes such
    an id fails on a KeyError and dies without closing its queues, printing a traceback
    after the one-line stop message. Each id taken here is the manager's no more; the
    shutdown fails its run.
    """
    work_ids = getattr(executor, "_work_ids", None)
    if work_ids is None:
        return
    while True:
        try:
            work_ids.get_nowait()
        except queue.Empty:
            return


def run_local(todo: list[Task], settings: RunSettings, jobs: int, tick: float | None = None) -> Runs:
    """The runs of `todo`, in the order they finish, on `jobs` local processes (loky)."""
    if jobs == 1:
        return _InProcess(todo, settings)
    return _LocalPool(todo, settings, jobs, tick)


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


class _DaskPool(Runs):
    """The runs on a Dask cluster: `client`'s (a running scheduler), or else a local cluster of
    `jobs` worker processes started here and closed by close()."""

    def __init__(self, todo: list[Task], settings: RunSettings, jobs: int, client, tick: float | None):
        try:  # the optional dask extra, imported only for --backend dask
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise UserError(DASK_MISSING) from None
        self.tick = tick
        self._cluster = None
        if client is None:
            self._cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                         dashboard_address=None)
            client = Client(self._cluster)
        self._client = client
        # Higher priority first: the longest-first order of `todo`. pure=False: two runs are
        # never the same computation to Dask, whatever their arguments.
        self._pending = {client.submit(execute_task, task, settings, pure=False, priority=len(todo) - i)
                         for i, task in enumerate(todo)}

    def __iter__(self):
        from dask.distributed import wait

        while self._pending:
            try:
                done, _ = wait(list(self._pending), timeout=self.tick, return_when="FIRST_COMPLETED")
            except TimeoutError:
                yield None
                continue
            future = min(done, key=lambda f: f.key)
            self._pending.discard(future)
            yield future.result()

    def stop(self) -> list[results.RunOutput]:
        finished = [f for f in self._pending if f.status == "finished"]
        self._pending.difference_update(finished)
        return [f.result() for f in finished]

    def close(self) -> None:
        if self._pending:
            self._client.cancel(list(self._pending))
            self._pending.clear()
        if self._cluster is not None:  # a client of a remote scheduler is its caller's to close
            self._client.close()
            self._cluster.close()


def run_dask(todo: list[Task], settings: RunSettings, jobs: int, client=None, tick: float | None = None) -> Runs:
    """Fan out on `client` (connected to a scheduler), or else on a local cluster of `jobs` workers."""
    return _DaskPool(todo, settings, jobs, client, tick)
