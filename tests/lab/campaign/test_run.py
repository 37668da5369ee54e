"""lab.campaign.run on a local cluster of 2 worker processes: the table equals the same campaign
run in this process (`sync`) row for row except the timings; a worker SIGKILLed mid-campaign
loses no task and counts none twice; a rerun adds nothing; a problem that crashes its task is a
row with the error."""
from __future__ import annotations

import os
import shutil
import signal

import pytest

from lab.campaign.collect import INDEX
from lab.campaign.run import check_scheduler, plan, run_campaign
from lab.campaign.table import ROWS, read_rows
from lab.campaign.tasks import ERROR, OK, TOLERANCES, column
from solver.params import ParamError

# What differs between two runs of the same task: the clocks and where it ran.
TIMINGS = {"cpu_seconds", "wall_seconds", "solve_seconds", "worker",
           *(column(t) for t in TOLERANCES)}


def untimed(rows: list[dict]) -> list[dict]:
    """Rows without their timings; a time to a tolerance kept as whether it was reached."""
    return [{k: (v is not None if k.startswith("time_to_") else v) for k, v in r.items()
             if k not in TIMINGS - {column(t) for t in TOLERANCES}} for r in rows]


@pytest.fixture(scope="module")
def with_broken(tiny_collection, tmp_path_factory):
    """The tiny collection plus a file that is no FCLIB problem, listed in its index."""
    folder = tmp_path_factory.mktemp("with-broken")
    for path in tiny_collection.iterdir():
        shutil.copy(path, folder / path.name)
    (folder / "broken.hdf5").write_bytes(b"not an HDF5 file")
    index = (folder / INDEX).read_text().replace(
        '"problems": [', '"problems": [{"file": "broken.hdf5", "label": "broken", '
                         '"contacts": 1, "size": 3, "mu": 0.5}, ')
    (folder / INDEX).write_text(index)
    return folder


def test_a_cluster_gives_the_table_sync_gives_and_a_rerun_adds_nothing(with_broken, tmp_path):
    # Iteration caps, not the clock, end these runs: the same numbers wherever they run.
    tasks = plan(with_broken, ["pgs", "apgd"], [], 60.0, 30)
    sync = run_campaign(tasks, tmp_path / "sync", "sync")
    cluster = run_campaign(tasks, tmp_path / "cluster", "processes", workers=2)
    assert (sync.done, cluster.done, cluster.failed) == (6, 6, 2)
    a, b = read_rows(tmp_path / "sync"), read_rows(tmp_path / "cluster")
    assert untimed(a) == untimed(b)
    assert len({r["worker"] for r in b}) == 2  # both workers took tasks
    # the file that is no problem: a row per solver with the reader's error, not a dead run
    broken = [r for r in b if r["problem"] == "broken.hdf5"]
    assert [r["status"] for r in broken] == [ERROR, ERROR]
    assert all("broken.hdf5" in r["message"] for r in broken)
    assert {r["status"] for r in b if r["problem"] != "broken.hdf5"} == {OK}
    files = sorted((tmp_path / "cluster" / ROWS).iterdir())
    stamps = [p.stat().st_mtime_ns for p in files]
    again = run_campaign(tasks, tmp_path / "cluster", "processes", workers=2)
    assert (again.skipped, again.done) == (6, 0)
    assert sorted((tmp_path / "cluster" / ROWS).iterdir()) == files
    assert [p.stat().st_mtime_ns for p in files] == stamps


def test_a_worker_killed_mid_campaign_loses_no_task_and_counts_none_twice(tiny_collection,
                                                                          tmp_path):
    # Clock-bound tasks (0.3 s each, no cap to speak of) keep the workers busy when it strikes.
    tasks = plan(tiny_collection, ["pgs", "psor", "jacobi", "apgd"],
                 ["jacobi.beta=0.01"], 0.3, 10**7)
    killed = []

    def kill_a_busy_worker(row, client):
        if killed:
            return
        busy = [w for w, keys in client.processing().items() if keys]
        if busy:
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            running = client.processing()[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed.append((pid, {k.rpartition("-")[2] for k in running}))

    summary = run_campaign(tasks, tmp_path, "processes", workers=2, on_row=kill_a_busy_worker)
    assert killed, "no worker was busy when the first row came back"
    rows = read_rows(tmp_path)
    assert summary.done == len(tasks) == len(rows) == 8
    assert sorted(r["key"] for r in rows) == sorted(t.key for t in tasks)
    assert len(list((tmp_path / ROWS).iterdir())) == 8
    assert {r["status"] for r in rows} <= {OK, "budget"}
    pid, lost = killed[0]
    # what the dead worker was running was done again by a live one
    assert lost and all(int(r["worker"].rpartition(":")[2]) != pid
                        for r in rows if r["key"] in lost)


def test_an_unknown_scheduler_is_refused():
    with pytest.raises(ParamError, match="--scheduler dask: one of processes, threads, sync"):
        check_scheduler("dask")
    check_scheduler("tcp://10.0.0.1:8786")


def test_threads_and_a_running_scheduler_give_the_table_sync_gives(tiny_collection, tmp_path):
    """`threads` (one worker process of this machine, a thread per core) and `tcp://` (a
    scheduler started apart, here a LocalCluster of one process whose address is all the
    campaign is given) run the same tasks to the same rows as `sync`."""
    from distributed import LocalCluster

    tasks = plan(tiny_collection, ["pgs", "apgd"], [], 60.0, 30)
    sync = run_campaign(tasks, tmp_path / "sync", "sync")
    threads = run_campaign(tasks, tmp_path / "threads", "threads", workers=2)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://")
        remote = run_campaign(tasks, tmp_path / "tcp", cluster.scheduler_address)
    assert sync.done == threads.done == remote.done == len(tasks) == 4
    expected = untimed(read_rows(tmp_path / "sync"))
    assert untimed(read_rows(tmp_path / "threads")) == expected
    assert untimed(read_rows(tmp_path / "tcp")) == expected
    # the running scheduler's one worker took every task
    assert len({r["worker"] for r in read_rows(tmp_path / "tcp")}) == 1


def test_a_plugin_solver_runs_on_the_cluster_workers(tiny_collection, tmp_path):
    """A solver loaded from a module (--solver-module) is known to the client only: the
    cluster's workers load its module before their first task, and its rows are pgs's."""
    from solver.methods import registry

    method = registry.load_module("tests.lab.campaign.frictional_plugin")
    try:
        tasks = plan(tiny_collection, ["plugin-pgs", "pgs"], [], 60.0, 30)
        summary = run_campaign(tasks, tmp_path, "processes", workers=2)
    finally:
        registry.METHODS.pop(method.name)
        registry.PLUGINS.pop(method.name)
    assert (summary.done, summary.failed) == (4, 0)
    rows = untimed(read_rows(tmp_path))
    by_solver = {s: [{k: v for k, v in r.items() if k not in ("key", "solver", "trace")}
                     for r in rows if r["solver"] == s] for s in ("pgs", "plugin-pgs")}
    assert by_solver["plugin-pgs"] == by_solver["pgs"] and len(by_solver["pgs"]) == 2
