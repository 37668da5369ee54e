"""Running a campaign: the tasks of a collection × solvers × settings, on Dask's distributed
scheduler (a local cluster of processes by default, or a running cluster at tcp://...), or in
this process (`sync`, for debugging). Rows are written here, by the client, as tasks finish:
a worker needs no access to the table, only to the collection's files.
"""
from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from solver.methods import registry
from solver.params import ParamError

from ..io.files import write_json
from .collect import read_collection
from .table import done_keys, write_row
from .tasks import ERROR, Task, prepare, run_task, solver_settings

SCHEDULERS = ("processes", "threads", "sync")
CAMPAIGN = "campaign.json"
# A task whose worker dies is run again elsewhere; one that kills every worker it lands on
# (a segfaulting kernel) ends as an error row after this many tries, not as a dead campaign.
RETRIES = 2


@dataclass
class Summary:
    """total: tasks of the campaign; skipped: already in the table; done: rows written now;
    failed: of those, status error; seconds: wall time of the run."""

    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    seconds: float = 0.0


def plan(collection: str | os.PathLike, solvers: list[str], assignments: list[str],
         budget: float, cap: int | None = None) -> list[Task]:
    """Every (problem, solver) task of the campaign, problems in the collection's order."""
    folder = Path(collection)
    entries = read_collection(folder)
    settings = solver_settings(solvers, assignments)
    extra = {} if cap is None else {"cap": cap}
    return [Task(e.file, str((folder / e.file).resolve()), s, tuple(sorted(settings[s].items())),
                 budget, **extra) for e in entries for s in solvers]


def check_scheduler(scheduler: str) -> None:
    if scheduler not in SCHEDULERS and not scheduler.startswith(("tcp://", "tls://")):
        raise ParamError(f"--scheduler {scheduler}: one of {', '.join(SCHEDULERS)} or an "
                         "address tcp://HOST:PORT")


def _prepare_plugin(solvers: list[str], pin: bool, modules: list[str]):
    """The worker plug-in of a campaign (its class made here: distributed is imported only
    when a campaign runs, not by every marbles-bench command)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class _Prepare(WorkerPlugin):
        """Worker start-up: the plug-in solvers' modules loaded (a worker is another process:
        it knows only the registry's own), one Numba thread, the solvers' kernels compiled,
        and on a local cluster each worker pinned to one core, so concurrent tasks share no
        core."""

        name = "marbles-campaign-prepare"

        def __init__(self, solvers: list[str], pin: bool, modules: list[str]):
            self.solvers, self.pin, self.client = list(solvers), pin, os.getpid()
            self.modules = list(modules)

        def setup(self, worker) -> None:
            if os.getpid() != self.client:
                try:
                    # Ctrl-C is the client's to handle: it stops the campaign and closes the
                    # cluster, without a traceback from every worker.
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                except ValueError:
                    pass  # not the worker's main thread: the cluster's shutdown still stops it
            if self.pin and hasattr(os, "sched_setaffinity") and str(worker.name).isdigit():
                cores = sorted(os.sched_getaffinity(0))
                os.sched_setaffinity(0, {cores[int(worker.name) % len(cores)]})
            for module in self.modules:
                registry.load_module(module)
            prepare(self.solvers)

    return _Prepare(solvers, pin, modules)


def _client(scheduler: str, workers: int):
    """(client, cluster or None) for `scheduler`; logs of the cluster kept to errors."""
    from distributed import Client, LocalCluster

    if scheduler.startswith(("tcp://", "tls://")):
        return Client(scheduler), None
    processes = scheduler == "processes"
    cluster = LocalCluster(n_workers=workers if processes else 1,
                           threads_per_worker=1 if processes else workers,
                           processes=processes, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def default_workers() -> int:
    """One worker per core this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_campaign(tasks: list[Task], out: str | os.PathLike, scheduler: str = "processes",
                 workers: int | None = None,
                 progress: Callable[[Summary], None] | None = None,
                 on_row: Callable[[dict, object], None] | None = None) -> Summary:
    """Run the tasks of `tasks` whose key is not in the table at `out` (created), one row each.
    progress(summary) after every row; on_row(row, client or None), for tests that act
    mid-campaign. Ctrl-C stops it with every row written so far whole."""
    check_scheduler(scheduler)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    have = done_keys(out)
    todo = [t for t in tasks if t.key not in have]
    summary = Summary(len(tasks), len(tasks) - len(todo))
    start = time.perf_counter()
    write_json(out / CAMPAIGN, {"tasks": len(tasks),
                                "runs": list(dict.fromkeys(t.label for t in tasks)),
                                "budget_s": sorted({t.budget for t in tasks}),
                                "problems": list(dict.fromkeys(t.problem for t in tasks))})

    def record(row: dict, client) -> None:
        write_row(out, row)
        summary.done += 1
        summary.failed += row["status"] == ERROR
        summary.seconds = time.perf_counter() - start
        if on_row is not None:
            on_row(row, client)
        if progress is not None:
            progress(summary)

    if not todo:
        return summary
    if scheduler == "sync":
        prepare(sorted({t.solver for t in todo}))
        for task in todo:
            record(run_task(task), None)
        return summary
    _on_dask(todo, scheduler, workers or default_workers(), record)
    return summary


def _on_dask(todo: list[Task], scheduler: str, workers: int, record) -> None:
    """Run `todo` on Dask, record(row, client) as each finishes, in this (the main) thread."""
    from distributed import as_completed

    client, cluster = _client(scheduler, workers)
    try:
        solvers = sorted({t.solver for t in todo})
        modules = [registry.PLUGINS[s] for s in solvers if s in registry.PLUGINS]
        client.register_plugin(_prepare_plugin(solvers, scheduler == "processes", modules))
        futures = client.map(run_task, todo, key=[f"marbles-task-{t.key}" for t in todo],
                             retries=RETRIES, pure=False)
        by_key = {f.key: t for f, t in zip(futures, todo)}
        # Results are gathered in the background: the wait is here, where Ctrl-C stops it
        # cleanly, rather than in future.result().
        for future, result in as_completed(futures, with_results=True, raise_errors=False):
            if future.status == "error":  # e.g. KilledWorker: the task's own row
                result = _lost(by_key[future.key], future.exception())
            record(result, client)
            future.release()
    except KeyboardInterrupt:
        # The rows are whole; what Dask says while its cluster is torn down would only bury
        # the one line that tells how many.
        for name in ("distributed", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _lost(task: Task, err: BaseException) -> dict:
    """The error row of a task Dask gave up on (its workers died every time)."""
    return {"key": task.key, "problem": task.problem, "solver": task.solver,
            "settings": task.settings_text(), "budget_s": task.budget, "device": "cpu",
            "status": ERROR, "message": f"{type(err).__name__}: {err}".splitlines()[0]}
