"""A pass over a partition's blocks, compiled twice from its one source.

A driver loops over a step's blocks with `prange`. Numba compiles a `parallel=True` function
whole, its parallel regions included, even when the partition has one block and the region
never runs: a serial step paid for every parallel region it never entered (a cold `pgs`
warm-up took 74 s against 29 s for serial kernels alone). `driver` compiles the same source a
second time without `parallel`, where `prange` is `range`, and its calls to other drivers go
to their serial twins too. A call runs the serial twin for one block and the parallel one for
more, so a serial step never compiles a parallel region. Both twins compute the same values in
the same order (a block's work does not depend on which thread runs it).
"""
from __future__ import annotations

import functools
import inspect
import types

import numpy as np
from numba import njit

# The parameter that says how many blocks a call covers: a partition (ranges, phases), the
# ranges alone, or a count of equal shares.
BLOCK_PARAMETERS = ("partition", "ranges", "parts")


class Driver:
    """A driver's two twins (`parallel`, `serial`, made on first use), called like a Numba
    function from Python, and seen by other drivers' twins as the twin of their own kind."""

    def __init__(self, func, options: dict):
        functools.update_wrapper(self, func)
        self.func = func
        self.options = options
        parameters = list(inspect.signature(func).parameters.values())
        at = [i for i, p in enumerate(parameters) if p.name in BLOCK_PARAMETERS]
        self._at = at[0] if at else None
        self._default = parameters[self._at].default if at else None
        self._twins: dict[bool, object] = {}

    def _twin(self, serial: bool):
        twin = self._twins.get(serial)
        if twin is None:
            # The twin's own globals, read by Numba when it compiles: other drivers are
            # replaced by their twins of the same kind after this one is registered (drivers
            # of one module name each other).
            names = dict(self.func.__globals__)
            func = types.FunctionType(self.func.__code__, names, self.func.__name__,
                                      self.func.__defaults__, self.func.__closure__)
            func.__qualname__ = self.func.__qualname__ + ("_serial" if serial else "")
            func.__doc__ = self.func.__doc__
            options = {**self.options, "parallel": False} if serial else self.options
            twin = self._twins[serial] = njit(**options)(func)
            for name, value in list(names.items()):
                if isinstance(value, Driver):
                    names[name] = value._twin(serial)
        return twin

    @property
    def parallel(self):
        return self._twin(False)

    @property
    def serial(self):
        return self._twin(True)

    @property
    def signatures(self) -> list:
        """The signatures compiled so far, either twin."""
        return [s for twin in self._twins.values() for s in twin.signatures]

    def blocks(self, args: tuple) -> int:
        """How many blocks a call with `args` covers (1 without a block parameter)."""
        if self._at is None:
            return 1
        part = args[self._at] if self._at < len(args) else self._default
        if isinstance(part, tuple):
            part = part[0]
        if isinstance(part, (int, np.integer)):
            return int(part)
        return (part.shape[0] - 1) // 2

    def __call__(self, *args):
        # blocks(args) == 1 written out: this runs once per kernel call of every step, and a
        # serial step makes about eight.
        at = self._at
        if at is None:
            serial = True
        else:
            part = args[at] if at < len(args) else self._default
            if part.__class__ is tuple:
                part = part[0]
            if isinstance(part, (int, np.integer)):
                serial = part == 1
            else:
                serial = (part.shape[0] - 1) // 2 == 1
        twin = self._twins.get(serial)
        return (twin if twin is not None else self._twin(serial))(*args)


def driver(**options):
    """Decorator: `options` as njit takes them (parallel=True for a driver with prange; a
    plain kernel that calls drivers takes this too, so its serial twin calls theirs)."""
    return lambda func: Driver(func, options)
