"""numba-cuda, imported once and checked: whether a CUDA device (or numba-cuda's simulator,
NUMBA_ENABLE_CUDASIM=1) can run the cuda backend, and the launch shapes its kernels use.

numba-cuda 0.30 reads `np.row_stack` at its first compile, which numpy 2.5 removed; the alias
below (numpy's own `vstack`, which row_stack always was) lets it run on either numpy.
"""
from __future__ import annotations

import os
import sys

import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

try:
    from numba import cuda
except ImportError as error:  # numba-cuda missing: the extra was not installed
    cuda = None
    _IMPORT_ERROR = str(error)
else:
    _IMPORT_ERROR = ""



def simulated() -> bool:
    """Whether kernels run on numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1): Python threads,
    one block at a time."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def shared(body):
    """A body written once for both devices: a CPU function of solver/ (njit) over a range of
    items, which the GPU's kernels call for one item (c, c + 1). On the GPU numba-cuda compiles
    the same source as a device function. The simulator runs kernels as Python on arrays of its
    own, which a CPU function cannot take: there the call hands the CPU function the NumPy
    arrays inside them, so the simulator runs the CPU's very code."""
    if not simulated():
        return body

    def on_host(*args):
        return body(*(_host(a) for a in args))

    on_host.__name__ = on_host.__qualname__ = body.__name__
    return on_host


def _host(value):
    """The NumPy array inside a simulator's array (tuples of them too); anything else as it is."""
    if isinstance(value, tuple):
        return tuple(_host(v) for v in value)
    value = vars(value).get("_item", value) if hasattr(value, "__dict__") else value
    array = getattr(value, "_ary", None)
    return value if array is None else array


# Threads per block of every kernel; the simulator runs each thread as a Python thread, so
# there a block is a handful. Every kernel computes the same for any block size.
THREADS = 8 if simulated() else 256


def _shared_array(self, shape, dtype, alignment=None):
    """numba-cuda's simulated cuda.shared.array under a lock. The simulator finds a block's
    array by the calling line, and its threads look it up and create it unlocked: two threads
    that both miss create two arrays, and a block reduction then misses part of the block (a
    solve's readings wrong, now and then, on a busy machine). Dynamic shared memory (shape 0)
    is the simulator's own."""
    if alignment is not None or shape == 0:
        return _SIMULATED_SHARED(self, shape, dtype, alignment)
    from numba.core import types
    from numba.np import numpy_support

    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    frame = sys._getframe(1)
    caller = (frame.f_code.co_filename, frame.f_lineno)
    with _SHARED_LOCK:
        array = self._allocations.get(caller)
        if array is None:
            array = np.empty(shape, dtype)
            self._allocations[caller] = array
    return array


# The simulator's block runner polls its threads while holding the interpreter lock, so each
# barrier waits for a switch: with the default 5 ms a 40-marble step took 5.6 s, at 1 ms 0.6 s,
# and the GPU tests ran a third faster at 50 µs than at 1 ms. Only while a simulated kernel runs:
# elsewhere (the window's threads) the interpreter's own interval stands.
SIMULATED_SWITCH = 5e-5  # s


def _switching_launch(self, *args):
    """A simulated launch with the interpreter's switch interval at SIMULATED_SWITCH."""
    if self._device:
        return _SIMULATED_CALL(self, *args)
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, SIMULATED_SWITCH))
    try:
        return _SIMULATED_CALL(self, *args)
    finally:
        sys.setswitchinterval(before)


if simulated() and cuda is not None:
    import threading

    from numba.cuda.simulator.kernel import FakeCUDAKernel
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    _SHARED_LOCK = threading.Lock()
    _SIMULATED_SHARED = FakeCUDAShared.array
    FakeCUDAShared.array = _shared_array
    _SIMULATED_CALL = FakeCUDAKernel.__call__
    FakeCUDAKernel.__call__ = _switching_launch


def unavailable() -> str | None:
    """Why the cuda backend cannot run here (one line), or None when it can."""
    if cuda is None:
        return (f"the cuda device needs numba-cuda (pip install -e '.[cuda]'): {_IMPORT_ERROR}")
    if simulated():
        return None
    try:
        if not cuda.is_available():
            return "no CUDA GPU was found (numba-cuda sees none; NUMBA_ENABLE_CUDASIM=1 runs " \
                   "the cuda backend on its simulator)"
    except Exception as error:  # a broken driver: the message says why
        return f"CUDA is not usable: {' '.join(str(error).split())}"
    return None


def blocks_for(count: int) -> int:
    """Blocks of THREADS threads for one thread per item of `count` (at least one)."""
    return max(1, (int(count) + THREADS - 1) // THREADS)


_RESIDENT: dict = {}  # kernel -> the most blocks of it the device holds at once


def cooperative_blocks(kernel, items: int) -> int:
    """Blocks of a cooperative launch of `kernel` over `items`: as many as the items need, at
    most as many as the device holds at once (the grid must be resident to synchronise): one
    a multiprocessor until the kernel's first launch has compiled it and its resources are
    known."""
    if simulated():
        return 1
    most = _RESIDENT.get(kernel)
    if most is None:
        compiled = list(kernel.overloads.values())
        if compiled:
            most = min(int(k.max_cooperative_grid_blocks(THREADS)) for k in compiled)
            _RESIDENT[kernel] = most
        else:
            most = int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    return max(1, min(blocks_for(items), most))
