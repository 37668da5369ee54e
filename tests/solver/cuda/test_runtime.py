"""The simulator's shared arrays: every thread of a block gets the one array of a line, even
when the threads ask at once (numba-cuda's own lookup races; solver/cuda/runtime.py locks it)."""
import threading
import time

import numpy as np
import pytest

from solver.cuda import runtime

pytestmark = pytest.mark.skipif(not runtime.simulated(), reason="the simulator's shared arrays")


def test_threads_asking_at_once_share_one_array(monkeypatch):
    from numba.cuda.simulator import kernelapi

    class SlowNumpy:
        """numpy whose `empty` sleeps: the simulator's lookup then misses in every thread
        between its look and its store, unless that is locked."""

        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def empty(*args, **kwargs):
            time.sleep(0.01)
            return np.empty(*args, **kwargs)

    monkeypatch.setattr(kernelapi, "np", SlowNumpy())
    shared = kernelapi.FakeCUDAShared(0)
    start = threading.Barrier(6)
    got = []

    def ask():
        start.wait()
        got.append(shared.array(8, np.float64))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 6 and all(a is got[0] for a in got)
    assert shared.array(8, np.float64) is not got[0]  # another line, another array
