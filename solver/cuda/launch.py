"""Kernel launches whose arguments cost microseconds, not tens of them.

numba-cuda types every argument of a launch and wraps every array anew on each call: on the
lent H100 some 10 µs an array, and a GPU step passes about a hundred, so a step's floor was
milliseconds of Python before any arithmetic. A `Kernel` (the `kernel` decorator, used in
place of `cuda.jit` for what the host launches) keeps, per kind of argument list (each array's
numba type, each scalar's Python type, the tuples' nesting), the compiled kernel that
numba-cuda's own launch chose the first time; later launches flatten the arguments exactly as
numba-cuda does (`flatten`, checked against numba-cuda's own marshalling at each kind's first
launch) and hand them to the driver's launch. Device arrays that persist (solver/cuda/backend.py
keeps its views) carry their numba type and memory view cached, so an array costs one tuple.

On the simulator, or with MARBLES_CUDA_LAUNCH=numba, every launch is numba-cuda's own.
"""
from __future__ import annotations

import ctypes
import os

from .runtime import cuda, simulated

# numba-cuda's scalar arguments by Python type: the ctypes type a kernel takes it as (None:
# the value itself).
_SCALARS = {int: ctypes.c_int64, float: ctypes.c_double, bool: None}

# Launches left to numba-cuda because an argument is of a type `flatten` does not lay out
# (a numpy scalar, a host array), by kernel name: a benchmark reports them.
SLOW_LAUNCHES: dict[str, int] = {}


def enabled() -> bool:
    """Whether launches bypass numba-cuda's per-call marshalling (a real GPU, not disabled)."""
    return (cuda is not None and not simulated()
            and os.environ.get("MARBLES_CUDA_LAUNCH", "") != "numba")


def flatten(args: tuple, params: list) -> tuple:
    """The kind of `args` (nested tuples of device arrays, ints, floats and bools), and their
    kernel parameters appended to `params` as numba-cuda's launch lays them out: an array is
    (meminfo 0, parent 0, size, itemsize, pointer, *shape, *strides in bytes)."""
    kind = []
    for a in args:
        if isinstance(a, tuple):
            kind.append(flatten(a, params))
            continue
        scalar = _SCALARS.get(type(a), False)
        if scalar is False:
            view = getattr(a, "_strided_memory_view_shim", None)
            if view is None:
                raise TypeError(f"not an argument this module lays out: {type(a).__name__}")
            params.extend((0, 0, view.size, view.dtype.itemsize, view.ptr))
            params.extend(view.shape)
            params.extend(view._layout.strides_in_bytes)
            kind.append(a._numba_type_)
        else:
            params.append(a if scalar is None else scalar(a))
            kind.append(type(a))
    return tuple(kind)


def numba_params(compiled, args: tuple) -> list:
    """The kernel parameters numba-cuda's own launch makes of `args` for `compiled`."""
    params: list = []
    for ty, value in zip(compiled.argument_types, args):
        compiled._prepare_args(ty, value, 0, [], params)
    return params


def same_params(ours: list, theirs: list) -> bool:
    """Whether two parameter lists hold the same values (ctypes scalars by value and type)."""
    if len(ours) != len(theirs):
        return False
    for a, b in zip(ours, theirs):
        if isinstance(a, ctypes._SimpleCData) or isinstance(b, ctypes._SimpleCData):
            if type(a) is not type(b) or a.value != b.value:
                return False
        elif type(a) is not type(b) or a != b:
            return False
    return True


class Kernel:
    """A numba-cuda kernel launched as `kernel[blocks, threads](*args)`; its other attributes
    are the dispatcher's."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self._compiled: dict = {}  # kind of argument list -> (cufunc kernel, cooperative)
        self._configs: dict = {}

    def __getattr__(self, name):
        return getattr(self.dispatcher, name)

    def __getitem__(self, config):
        if not enabled() or len(config) != 2:  # a stream or shared memory: numba-cuda's own
            return self.dispatcher[config]
        blocks, threads = config
        return _Launch(self, int(blocks), int(threads))

    def launch(self, blocks: int, threads: int, args: tuple) -> None:
        params: list = []
        try:
            kind = flatten(args, params)
        except TypeError:  # a numpy scalar, a host array: numba-cuda's own launch
            name = self.dispatcher.py_func.__name__
            SLOW_LAUNCHES[name] = SLOW_LAUNCHES.get(name, 0) + 1
            self.dispatcher[blocks, threads](*args)
            return
        found = self._compiled.get(kind)
        if found is None:
            self.dispatcher[blocks, threads](*args)  # compiles the first time
            self._compiled[kind] = self._checked(args, params)
            return
        launch, stream = _driver()
        launch(stream, self._config(blocks, threads, found[1]), found[0], *params)

    def _checked(self, args: tuple, params: list) -> tuple:
        """The compiled kernel numba-cuda chose for `args`, once its parameters are seen to be
        the ones `flatten` made (RuntimeError otherwise: this module would launch wrongly)."""
        d = self.dispatcher
        compiled = d.overloads[tuple(d.typeof_pyval(a) for a in args)]
        if not same_params(params, numba_params(compiled, args)):
            raise RuntimeError(f"solver.cuda.launch: the parameters of {d.py_func.__name__} "
                               "differ from numba-cuda's; set MARBLES_CUDA_LAUNCH=numba")
        return compiled._codelibrary.get_cufunc().kernel, bool(compiled.cooperative)

    def _config(self, blocks: int, threads: int, cooperative: bool):
        key = (blocks, threads, cooperative)
        config = self._configs.get(key)
        if config is None:
            from cuda.core import LaunchConfig
            from numba.cuda._compat import CUDA_CORE_GE_1_0

            flag = "is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch"
            config = LaunchConfig(grid=(blocks, 1, 1), block=(threads, 1, 1), shmem_size=0,
                                  **{flag: cooperative})
            self._configs[key] = config
        return config


class _Launch:
    __slots__ = ("kernel", "blocks", "threads")

    def __init__(self, kernel: Kernel, blocks: int, threads: int):
        self.kernel, self.blocks, self.threads = kernel, blocks, threads

    def __call__(self, *args) -> None:
        self.kernel.launch(self.blocks, self.threads, args)


_DRIVER: list = []


def _driver():
    """(the driver's launch, the default stream as it takes it: numba-cuda's own conversion),
    looked up once rather than at every launch."""
    if not _DRIVER:
        from cuda.core import launch
        from numba.cuda.cudadrv.driver import _to_core_stream

        _DRIVER.append((launch, _to_core_stream(0)))
    return _DRIVER[0]


def kernel(fn) -> Kernel:
    """`cuda.jit` for a kernel the host launches, launched through `Kernel`."""
    return Kernel(cuda.jit(fn))
