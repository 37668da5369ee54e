"""Compile every kernel of the cuda backend to PTX for a real GPU, without one: a typing error,
or device code that the CUDA linker refuses, shows here and not first on a lent GPU. The
simulator runs kernels as Python and checks neither.

    python -m tests.solver.cuda.ptx_check [--cc 9.0]

First, on numba-cuda's simulator, small GPU steps of every solver (with and without friction
and rolling rows, fast and traced) and a frozen solve record the argument types of every kernel
launch; then, in a second process without the simulator, each kernel is compiled to PTX for
those types with numba-cuda's compiler (it needs the CUDA toolkit's NVVM, e.g. the
nvidia-cuda-nvrtc wheel or CUDA_HOME, but no GPU and no driver). Exit 0 when all compile, 1
with the failures listed, 2 when NVVM cannot be found.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pickle
import pkgutil
import subprocess
import sys
import tempfile
import time


def _key(fn, cells) -> tuple:
    """A kernel's name that both processes compute alike: module, qualified name, and for a
    kernel made by a closure the names of what it closes over."""
    return (fn.__module__, fn.__qualname__, tuple(cells))


def _cell_names(fn, name_of) -> list[str]:
    return [name_of(cell.cell_contents) for cell in (fn.__closure__ or ())]


def capture(path: str) -> int:
    """Run the scenarios on the simulator and write {key: {signature}} to `path`."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import numpy as np
    from numba import typeof
    from numba.cuda.simulator import kernel as sim
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    seen: dict = {}
    plain = sim.FakeCUDAKernel.__call__

    def host(value):
        if isinstance(value, FakeCUDAArray):
            return value._ary
        if isinstance(value, tuple):
            return tuple(host(v) for v in value)
        return value

    def name_of(value):
        fn = getattr(value, "fn", None)
        return fn.__name__ if fn is not None else repr(value)

    def recording(self, *args):
        if not self._device and not sim._kernel_context:
            sig = tuple(typeof(host(a)) for a in args)
            seen.setdefault(_key(self.fn, _cell_names(self.fn, name_of)), set()).add(sig)
        return plain(self, *args)

    sim.FakeCUDAKernel.__call__ = recording
    _scenarios(np)
    with open(path, "wb") as out:
        pickle.dump(seen, out)
    return sum(len(s) for s in seen.values())


def _scenarios(np) -> None:
    from numba import cuda

    from solver.cuda.driver import device_solve
    from solver.cuda.frozen import FrozenSolver, upload
    from solver.methods import registry
    from tests.solver.cuda.conftest import PILES, one_gpu_step
    from tests.solver.cuda.test_frozen import frozen

    from solver.options import StepOptions
    from solver.step import Simulation
    from tests.solver.cuda.conftest import copy_of, cpu_settled

    for solver in registry.on_device("cuda"):
        for scene, params in PILES[:3]:
            sim, _ = one_gpu_step(scene, params, solver, warm_start=1.0, iterations=3, steps=2)
            sim.step(trace=True)
            sim.world  # brings the world back: the download path
            # float32 storage: every solve kernel again with float32 arrays
            world = copy_of(cpu_settled(scene, params, 12), scene, params)
            sim = Simulation(world, StepOptions(registry.settings(solver, 3, False), 1.0, 1.0,
                                                1, "cuda", "float32"))
            sim.step()
            sim.step(trace=True)
        problem = frozen({"n": 12})
        FrozenSolver(solver).solve(problem, np.zeros(problem.size),
                                   registry.settings(solver, 2, True))
    for params in ({"n": 12}, {"n": 12, "mu": 0.5}):  # the global r's own kernels; phases
        problem = frozen(params)
        FrozenSolver("prox-jacobi").solve(problem, np.zeros(problem.size),
                                          registry.settings("prox-jacobi", 2, False,
                                                            {"r": "global"}))
        # one launch per phase (the launch-cost comparison's kernels)
        device = upload(problem)
        device_solve(device, registry.settings("jacobi", 2, False)).phased(
            cuda.to_device(np.zeros(device.size)), 1)


def _kernels():
    """{key: dispatcher} of every kernel in solver.cuda's modules (closures included)."""
    import solver.cuda
    from numba.cuda.dispatcher import CUDADispatcher

    from solver.cuda.launch import Kernel

    found = {}

    def visit(value):
        if isinstance(value, Kernel):
            value = value.dispatcher
        if isinstance(value, CUDADispatcher) and not value.targetoptions.get("device"):
            fn = value.py_func
            names = _cell_names(fn, lambda v: v.py_func.__name__
                                if isinstance(v, CUDADispatcher) else repr(v))
            found[_key(fn, names)] = value
        elif isinstance(value, tuple):
            for v in value:
                visit(v)

    for info in pkgutil.iter_modules(solver.cuda.__path__):
        module = importlib.import_module(f"solver.cuda.{info.name}")
        for value in vars(module).values():
            visit(value)
    return found


def compile_all(path: str, cc: tuple[int, int]) -> int:
    """Compile what `path` recorded; print a line per failure; the exit code."""
    from numba import cuda
    from numba.cuda import dispatcher

    try:
        from numba.cuda.cudadrv.nvvm import NVVM
        NVVM()
    except Exception as error:  # no toolkit: nothing can be checked here
        print(f"ptx_check: NVVM is not available ({' '.join(str(error).split())[:200]})",
              file=sys.stderr)
        return 2

    class _Device:  # what the compiler asks of the current device: its compute capability
        compute_capability = cc

    # Compiling a device function asks the driver for the current device's capability; here
    # there is no driver, so the capability is the one asked for.
    dispatcher.get_current_device = lambda: _Device()
    with open(path, "rb") as source:
        seen = pickle.load(source)
    kernels = _kernels()
    failures = []
    done = 0
    for key, sigs in sorted(seen.items(), key=lambda item: item[0][:2]):
        kernel = kernels.get(key)
        if kernel is None:
            failures.append(f"{key[0]}.{key[1]}: launched, but not found in solver.cuda")
            continue
        for sig in sigs:
            try:
                cuda.compile_ptx(kernel.py_func, sig, cc=cc)
                done += 1
            except Exception as error:
                text = " ".join(str(error).split())[:300]
                failures.append(f"{key[0]}.{key[1]}{sig}: {type(error).__name__}: {text}")
    missed = sorted(f"{k[0]}.{k[1]}" for k in set(kernels) - set(seen))
    print(f"ptx_check: {done} kernel signatures compiled for sm_{cc[0]}{cc[1]} (their device "
          f"functions with them), {len(failures)} failed; kernels the scenarios never launched: "
          f"{', '.join(missed) or 'none'}")
    for line in failures:
        print("  " + line)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.solver.cuda.ptx_check",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--cc", default="9.0", help="compute capability (default 9.0: H100)")
    parser.add_argument("--compile", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        cc = tuple(int(p) for p in args.cc.split("."))
        assert len(cc) == 2
    except (ValueError, AssertionError):
        parser.error(f"--cc {args.cc!r}: give MAJOR.MINOR, e.g. 9.0")
    if args.compile:
        return compile_all(args.compile, cc)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "signatures.pickle")
        t0 = time.perf_counter()
        env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
        code = ("import sys; from tests.solver.cuda.ptx_check import capture; "
                f"print(capture({path!r}), 'signatures recorded', file=sys.stderr)")
        recorded = subprocess.run([sys.executable, "-c", code], env=env)
        if recorded.returncode:
            print("ptx_check: the scenarios failed on the simulator", file=sys.stderr)
            return 1
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
        result = subprocess.run([sys.executable, "-m", "tests.solver.cuda.ptx_check",
                                 "--cc", args.cc, "--compile", path], env=env)
        print(f"ptx_check: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        return result.returncode


if __name__ == "__main__":
    sys.exit(main())
