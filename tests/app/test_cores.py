"""app.cores alone: a thread takes a core of its own, the other threads keep the rest."""
from __future__ import annotations

import os
import threading

import pytest

from app import cores

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux only")


def in_thread(fn):
    """Run fn in a new thread (which inherits this thread's cores); its result and its id."""
    out = {}

    def body():
        out["tid"] = threading.get_native_id()
        out["result"] = fn()
        out["own"] = os.sched_getaffinity(0)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    return out


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_the_caller_gets_one_core_and_every_other_thread_the_rest():
    every = set(os.sched_getaffinity(0))
    try:
        out = in_thread(cores.dedicate_core)
        core = out["result"]
        assert out["own"] == {core} and core in every
        assert cores.dedicated() == core
        assert os.sched_getaffinity(0) == every - {core}
        # A thread started now inherits the rest, not the dedicated core.
        assert in_thread(lambda: None)["own"] == every - {core}
    finally:
        cores.release_core()
    assert cores.dedicated() is None
    assert os.sched_getaffinity(0) == every


def test_with_one_core_nothing_changes():
    every = set(os.sched_getaffinity(0))
    one = {min(every)}
    os.sched_setaffinity(0, one)
    try:
        assert in_thread(cores.dedicate_core)["result"] is None
        assert cores.dedicated() is None and os.sched_getaffinity(0) == one
        cores.release_core()  # nothing to give back
        assert os.sched_getaffinity(0) == one
    finally:
        os.sched_setaffinity(0, every)


def test_marbles_pin_0_turns_it_off(monkeypatch):
    every = set(os.sched_getaffinity(0))
    monkeypatch.setenv(cores.ENV_OFF, "0")
    assert in_thread(cores.dedicate_core)["result"] is None
    assert cores.dedicated() is None and os.sched_getaffinity(0) == every


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_a_simulation_of_several_threads_is_not_pinned_and_unpins():
    every = set(os.sched_getaffinity(0))
    try:
        assert in_thread(lambda: cores.dedicate_core(2))["result"] is None
        assert cores.dedicated() is None and os.sched_getaffinity(0) == every
        # Pinned first (one thread), then several: every thread gets every core back.
        out = in_thread(lambda: (cores.dedicate_core(1), cores.dedicate_core(2)))
        assert out["result"][0] in every and out["result"][1] is None
        assert out["own"] == every and os.sched_getaffinity(0) == every
        assert cores.dedicated() is None
    finally:
        cores.release_core()
