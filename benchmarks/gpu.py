"""The cuda backend measured beside the CPU core in one run (not a test): checks first, then
ms/step by phase of settled box piles on the GPU and on the CPU, the convergence per iteration
of the GPU's solvers against serial PGS on frozen problems, and what a frame of the world costs
to bring back to the host.

    python -m benchmarks.gpu --sizes 10000,100000,1000000 --out gpu.json
    NUMBA_ENABLE_CUDASIM=1 python -m benchmarks.gpu --sizes 200 --steps 2 --settle 3 --cpu-steps 1

Checks (always first): on small piles, the GPU's solve of a step's problem against the CPU's
solve of the same problem (largest difference of λ relative to its largest entry), and two GPU
runs of the same steps bit for bit. Timings: each box of n marbles is settled on the GPU
(--settle steps), its last problem solved by `jacobi` in one launch, a launch per iteration and
a launch per phase (--mode-sizes), then --steps steps of each GPU solver are timed
(first_contacts: the contacts of the untimed first step, from the same state on either device)
(median per phase; every phase synchronises, so each carries its own kernels), then --cpu-steps
steps of the CPU core's pgs with --cpu-threads threads from the same state. --budget seconds:
sections that would start later are skipped and said so, so the run ends in time. Results: JSON
(--out) and a markdown table on stdout.
"""
from __future__ import annotations

import argparse
import copy
import cProfile
import io
import math
import os
import pstats
import statistics
import sys
import time

import numpy as np

import scenes
from lab.io.files import write_json
from solver.methods import registry
from solver.options import StepOptions
from solver.step import PHASES, Simulation

MU = 0.5
ITERATIONS = 20


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def box(n: int, friction: bool):
    params = {"n": n, **({"mu": MU, "mu_wall": MU} if friction else {})}
    return scenes.build("box", params)


def options(solver: str, device: str, friction: bool, threads: int = 1, trace=False,
            precision: str = "float64"):
    warm = 1.0 if friction else 0.0
    return StepOptions(registry.settings(solver, ITERATIONS, trace), warm, 1.0, threads, device,
                       precision)


def copy_state(source, target) -> None:
    for name in ("x", "v", "omega", "orientation"):
        getattr(target, name)[:] = getattr(source, name)
    target.time = source.time


def timed_steps(sim: Simulation, steps: int) -> dict:
    """Median ms per phase over `steps` steps, and the last contact count; on the GPU also
    `unsynced`: ms per step of `steps` more steps back to back, the phases not waiting for
    their kernels (a step then waits only where it reads numbers back)."""
    reports = [sim.step() for _ in range(steps)]
    out = {phase: 1e3 * statistics.median(r.timings[phase] for r in reports) for phase in PHASES}
    out["contacts"] = reports[-1].contacts
    out["residual"] = reports[-1].result.residual
    backend = sim.backend
    if backend.name == "cuda":
        from numba import cuda

        backend.timed_phases = False
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step()
        cuda.synchronize()
        out["unsynced"] = 1e3 * (time.perf_counter() - t0) / steps
        backend.timed_phases = True
    return out


def _launching(how: str):
    """Sets how kernels launch (solver/cuda/launch.py): "fast" or numba-cuda's own."""
    if how == "numba":
        os.environ["MARBLES_CUDA_LAUNCH"] = "numba"
    else:
        os.environ.pop("MARBLES_CUDA_LAUNCH", None)


def checks(sizes: tuple[int, ...]) -> list[dict]:
    """GPU against CPU on the same problem (a pile settled by the CPU, then one GPU step from a
    cold start; its problem solved again on the CPU), and the GPU step run twice."""
    rows = []
    for n in sizes:
        for friction in (False, True):
            cpu = Simulation(box(n, friction), options("pgs", "cpu", friction))
            for _ in range(40):
                cpu.step()
            for solver in registry.on_device("cuda"):
                runs = []
                for _ in range(2):
                    world = box(n, friction)
                    copy_state(cpu.world, world)
                    sim = Simulation(world, StepOptions(registry.settings(solver, ITERATIONS,
                                                                          False),
                                                        0.0, 1.0, 1, "cuda"))
                    sim.step()
                    runs.append(sim)
                first, second = runs
                p = first.problem
                ref = registry.METHODS[solver].solve(p.copy(), np.zeros(p.size),
                                                     registry.settings(solver, ITERATIONS, False))
                scale = max(float(np.abs(ref.lam).max(initial=0.0)), 1e-300)
                rows.append({"n": n, "friction": friction, "solver": solver, "contacts": p.m,
                             "relative_difference": float(
                                 np.abs(first.lam - ref.lam).max(initial=0.0) / scale),
                             "repeat_bit_for_bit": bool(
                                 np.array_equal(first.world.x, second.world.x)
                                 and np.array_equal(first.lam, second.lam))})
                _say(f"check {rows[-1]}")
    return rows


def _nbytes(arrays: tuple) -> int:
    """Bytes of the arrays in a nested tuple (scalars count 0)."""
    return sum(_nbytes(a) if isinstance(a, tuple) else int(getattr(a, "nbytes", 0))
               for a in arrays)


def sweep_bytes(solve, lam) -> int:
    """The least memory traffic of one `jacobi` iteration of DeviceSolve `solve` on λ: every
    array it reads once (A's factors, b and the steps, the laws, the CSR of contacts by
    marble) and λ, the marbles' velocity changes (with friction also the contacts'
    velocities) each written and read once. Gathers that miss the cache come on top, so
    bytes / time is a lower bound on the bandwidth the kernels reach."""
    p = solve.problem
    read = (p.A, solve.system[:2], p.csr[:3]) + ((p.laws,) if solve.frictional else ())
    both = (lam, solve.dv, solve.e) if solve.frictional else (lam, solve.dv)
    return _nbytes(read) + 2 * _nbytes(both)


def launch_modes(problem, n: int, friction: bool, repeats: int = 5) -> dict:
    """`jacobi`'s ITERATIONS iterations on `problem` (a settled box's last step) launched three
    ways: in one cooperative launch (a step's), one launch per iteration, one launch per phase
    (two an iteration); the median ms of `repeats` runs from λ = 0 (after one untimed run),
    whether the three give the same λ bit for bit, and the one launch's bandwidth by
    `sweep_bytes` (GB/s, a lower bound)."""
    from numba import cuda

    from solver.cuda.driver import device_solve
    from solver.cuda.frozen import upload

    device = upload(problem)
    solve = device_solve(device, registry.settings("jacobi", ITERATIONS, False))

    def per_iteration(lam):
        for _ in range(ITERATIONS):
            solve.sweep(lam, 1)

    modes = {"fused": lambda lam: solve.sweep(lam, ITERATIONS), "per_iteration": per_iteration,
             "per_phase": lambda lam: solve.phased(lam, ITERATIONS)}
    row = {"n": n, "friction": friction, "contacts": problem.m, "iterations": ITERATIONS}
    answers = []
    for name, run in modes.items():
        seconds = []
        for _ in range(repeats + 1):
            lam = cuda.to_device(np.zeros(problem.size))
            cuda.synchronize()
            t0 = time.perf_counter()
            run(lam)
            cuda.synchronize()
            seconds.append(time.perf_counter() - t0)
        row[f"{name}_ms"] = 1e3 * statistics.median(seconds[1:])
        answers.append(lam.copy_to_host())
    row["bit_for_bit"] = all(np.array_equal(answers[0], a) for a in answers[1:])
    row["bytes_per_iteration"] = sweep_bytes(solve, lam)
    row["fused_gb_s"] = row["bytes_per_iteration"] * ITERATIONS / (row["fused_ms"] * 1e6)
    return row


def modes_markdown(rows: list[dict]) -> str:
    lines = ["| box n | friction | contacts | one launch | a launch per iteration | "
             "a launch per phase | same λ | MB an iteration | GB/s, one launch |",
             "|---" * 9 + "|"]
    for r in rows:
        lines.append(f"| {r['n']} | {'μ 0.5' if r['friction'] else 'off'} | {r['contacts']} | "
                     f"{r['fused_ms']:.2f} ms | {r['per_iteration_ms']:.2f} | "
                     f"{r['per_phase_ms']:.2f} | {'yes' if r['bit_for_bit'] else 'NO'} | "
                     f"{r['bytes_per_iteration'] / 1e6:.1f} | {r['fused_gb_s']:.0f} |")
    return "\n".join(lines)


def timings(args, deadline: float, rows: list[dict], save, modes: list[dict]) -> list[dict]:
    """Appends a row per timed run to `rows` and, for the sizes of args.mode_sizes, the launch
    modes of each settled box to `modes`, calling `save()` after each."""
    for n in args.sizes:
        for friction in args.frictions:
            if time.perf_counter() > deadline:
                _say(f"skipped n={n} friction={friction}: out of time")
                continue
            world = box(n, friction)
            settle = Simulation(world, options("mass-split", "cuda", friction))
            t0 = time.perf_counter()
            for _ in range(args.settle):
                settle.step()
            _say(f"n={n} friction={friction}: settled in {time.perf_counter() - t0:.1f} s")
            if n in args.mode_sizes:
                modes.append(launch_modes(settle.problem, n, friction))
                save()
                _say(f"  launch modes {modes[-1]}")
            state = settle.world
            # The first solver, then its baselines, then the other solvers: a solver that takes
            # far longer than its peers (a pile thrown apart) then costs the run least.
            runs = [(solver, "fast", "float64") for solver in args.solvers[:1]]
            runs += [(solver, "numba", "float64") for solver in args.numba_launch]
            runs += [(solver, "fast", "float32") for solver in args.float32]
            runs += [(solver, "fast", "float64") for solver in args.solvers[1:]]
            for solver, how, precision in runs:
                if time.perf_counter() > deadline:
                    _say(f"skipped n={n} {solver}: out of time")
                    continue
                _launching(how)
                w = copy.deepcopy(state)
                sim = Simulation(w, options(solver, "cuda", friction, precision=precision))
                first = sim.step()  # compiled and warm
                row = {"n": n, "friction": friction, "device": "cuda", "solver": solver,
                       "launch": how, "precision": precision, "first_contacts": first.contacts,
                       **timed_steps(sim, args.steps)}
                _launching("fast")
                rows.append(row)
                save()
                _say(f"  {row}")
                if (solver, how, precision) == runs[0]:
                    t0 = time.perf_counter()
                    for _ in range(5):
                        sim.backend.download(sim._world)
                    rows[-1]["frame_ms"] = 1e3 * (time.perf_counter() - t0) / 5
            for threads in args.cpu_threads:
                if time.perf_counter() > deadline or (n > args.cpu_max and threads < 16):
                    continue
                w = copy.deepcopy(state)
                sim = Simulation(w, options("pgs", "cpu", friction, threads))
                first = sim.step()
                row = {"n": n, "friction": friction, "device": "cpu", "solver": "pgs",
                       "threads": threads, "first_contacts": first.contacts,
                       **timed_steps(sim, args.cpu_steps)}
                rows.append(row)
                save()
                _say(f"  {row}")
    return rows


def convergence(args) -> list[dict]:
    """Residual per iteration on a frozen bowl and box: serial PGS on the CPU, each GPU solver
    on the GPU (the same problem: the GPU step's, solved again from zero)."""
    rows = []
    for scene, params in (("bowl", {}), ("box", {"n": args.convergence_n})):
        world = scenes.build(scene, params)
        sim = Simulation(world, options("mass-split", "cuda", False))
        for _ in range(args.convergence_settle):
            sim.step()
        for solver, precision in [(s, "float64") for s in registry.on_device("cuda")] + [
                (s, "float32") for s in args.float32]:
            w = scenes.build(scene, params)
            copy_state(sim.world, w)
            gpu = Simulation(w, StepOptions(registry.settings(solver, args.convergence_iterations,
                                                              True), 0.0, 1.0, 1, "cuda",
                                            precision))
            report = gpu.step(trace=True)
            problem = gpu.problem
            pgs = registry.METHODS["pgs"].solve(problem.copy(), np.zeros(problem.size),
                                                registry.settings("pgs", args.convergence_iterations,
                                                                  True))
            target = float(pgs.trace[min(ITERATIONS, len(pgs.trace) - 1)])
            reached = np.flatnonzero(np.asarray(report.result.trace) <= target)
            rows.append({"scene": scene, "solver": solver, "precision": precision,
                         "contacts": problem.m,
                         "trace": [float(r) for r in report.result.trace],
                         "pgs_trace": [float(r) for r in pgs.trace],
                         "pgs_20": target,
                         "iterations_to_pgs_20": int(reached[0]) if reached.size else None})
            _say(f"convergence {scene} {solver} {precision}: reaches pgs's 20-iteration "
                 f"{target:.3e} "
                 f"after {rows[-1]['iterations_to_pgs_20']} iterations")
    return rows


def profile(args) -> dict:
    """Where a GPU step's host time goes: cProfile of --steps steps of `jacobi` on a box of
    --profile-n marbles (settled --settle steps), the functions by own time."""
    from numba import cuda

    out = {}
    for friction in args.frictions:
        world = box(args.profile_n, friction)
        sim = Simulation(world, options("jacobi", "cuda", friction))
        for _ in range(args.settle):
            sim.step()
        cuda.synchronize()
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        profiler.enable()
        for _ in range(args.steps):
            sim.step()
        profiler.disable()
        wall = (time.perf_counter() - t0) / args.steps
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(30)
        key = "friction" if friction else "frictionless"
        out[key] = {"ms_per_step_profiled": 1e3 * wall, "top": text.getvalue()}
        _say(f"profile {key}: {1e3 * wall:.2f} ms/step under cProfile\n{text.getvalue()}")
    return out


def launch_costs() -> dict:
    """µs per launch of an empty kernel from Python by the number of device arrays it takes,
    and of a cooperative one (median of 200 launches, each waited for); numba-cuda's own
    launch and solver/cuda/launch.py's."""
    from numba import cuda

    from solver.cuda.launch import Kernel
    from solver.cuda.runtime import simulated
    if simulated():
        return {}

    @cuda.jit
    def one(a):
        pass

    @cuda.jit
    def eight(t):
        pass

    @cuda.jit
    def thirty_two(t):
        pass

    @cuda.jit
    def cooperative(a):
        cuda.cg.this_grid().sync()

    arrays = [cuda.device_array(16) for _ in range(32)]
    cases = {"1 array": (one, (arrays[0],)), "8 arrays": (eight, (tuple(arrays[:8]),)),
             "32 arrays": (thirty_two, (tuple(arrays),)),
             "cooperative, 1 array": (cooperative, (arrays[0],))}
    cases.update({f"{name}, fast": (Kernel(kernel), args)
                  for name, (kernel, args) in list(cases.items())})
    out = {}
    for name, (kernel, args) in cases.items():
        kernel[1, 32](*args)
        cuda.synchronize()
        times = []
        for _ in range(200):
            t0 = time.perf_counter()
            kernel[1, 32](*args)
            cuda.synchronize()
            times.append(time.perf_counter() - t0)
        out[name] = 1e6 * statistics.median(times)
    t0 = time.perf_counter()
    for _ in range(200):
        arrays[0].copy_to_host()
    out["one read back"] = 1e6 * (time.perf_counter() - t0) / 200
    _say(f"launch costs (µs): {out}")
    return out


def markdown(rows: list[dict]) -> str:
    lines = ["| box n | friction | device | solver | launch / threads | ms/step | unsynced | "
             "collide | assemble | solve | integrate | contacts | frame ms |", "|---" * 13 + "|"]
    for r in rows:
        solver = r["solver"] + (" float32" if r.get("precision") == "float32" else "")
        cells = [r["n"], "μ 0.5" if r["friction"] else "off", r["device"], solver,
                 r.get("launch", r.get("threads", "")), f"{r['total']:.2f}",
                 f"{r['unsynced']:.2f}" if "unsynced" in r else "",
                 *(f"{r[phase]:.2f}" for phase in ("collide", "assemble", "solve", "integrate")),
                 r["contacts"], f"{r['frame_ms']:.2f}" if "frame_ms" in r else ""]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="marbles of the timed boxes, comma-separated (default %(default)s)")
    parser.add_argument("--friction", default="both", choices=("both", "off", "on"),
                        help=f"time each box without friction, with μ = {MU}, or both")
    parser.add_argument("--solvers", default=",".join(registry.on_device("cuda")),
                        help="GPU solvers timed, comma-separated (default: all)")
    parser.add_argument("--numba-launch", default="jacobi",
                        help="GPU solvers timed again with numba-cuda's own launches (the "
                             "baseline of solver/cuda/launch.py), comma-separated")
    parser.add_argument("--float32", default="jacobi",
                        help="solvers timed (and traced) again with float32 storage "
                             "(default %(default)s; '' for none)")
    parser.add_argument("--mode-sizes", default=None,
                        help="boxes whose settled problem `jacobi` also solves in one launch, a "
                             "launch per iteration and a launch per phase (default: every size)")
    parser.add_argument("--profile-n", type=int, default=10000,
                        help="marbles of the profiled box (section profile)")
    parser.add_argument("--steps", type=int, default=10,
                        help="timed GPU steps per box and solver (median; default %(default)s)")
    parser.add_argument("--settle", type=int, default=100,
                        help="GPU steps that settle each box before timing (default %(default)s)")
    parser.add_argument("--cpu-steps", type=int, default=3,
                        help="timed CPU steps of pgs from the same state (default %(default)s)")
    parser.add_argument("--cpu-threads", default="16",
                        help="the CPU core's thread counts, comma-separated (default %(default)s)")
    parser.add_argument("--cpu-max", type=int, default=100000,
                        help="above this many marbles only 16 threads or more run on the CPU")
    parser.add_argument("--check-sizes", default="64,200",
                        help="marbles of the GPU-against-CPU checks (default %(default)s)")
    parser.add_argument("--convergence-n", type=int, default=10000,
                        help="marbles of the box whose frozen problem the convergence section "
                             "solves (default %(default)s)")
    parser.add_argument("--convergence-settle", type=int, default=100,
                        help="steps before that problem is frozen (default %(default)s)")
    parser.add_argument("--convergence-iterations", type=int, default=200,
                        help="iterations of each solver on it (default %(default)s)")
    parser.add_argument("--budget", type=float, default=math.inf, help="seconds for the run")
    parser.add_argument("--skip", default="",
                        help="sections to skip: launch,checks,profile,timings,convergence")
    parser.add_argument("--out", default=None,
                        help="JSON file of every result, rewritten after each section")
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.mode_sizes = (args.sizes if args.mode_sizes is None
                       else [int(s) for s in args.mode_sizes.split(",") if s])
    args.frictions = {"both": (False, True), "off": (False,), "on": (True,)}[args.friction]
    args.cpu_threads = [int(t) for t in args.cpu_threads.split(",") if t]
    args.solvers = [s for s in args.solvers.split(",") if s]
    args.numba_launch = [s for s in args.numba_launch.split(",") if s]
    args.float32 = [s for s in args.float32.split(",") if s]
    for name in args.solvers + args.numba_launch + args.float32:
        if name not in registry.on_device("cuda"):
            parser.error(f"--solvers/--numba-launch/--float32: {name!r} is not a GPU solver "
                         f"({', '.join(registry.on_device('cuda'))})")
    skip = set(args.skip.split(","))
    start = time.perf_counter()
    deadline = start + args.budget
    result: dict = {}

    def save() -> None:
        if args.out:
            write_json(args.out, result)

    if "launch" not in skip:
        result["launch_us"] = launch_costs()
        save()
    if "checks" not in skip:
        result["checks"] = checks(tuple(int(s) for s in args.check_sizes.split(",") if s))
        save()
    if "profile" not in skip and time.perf_counter() < deadline - 60.0:
        result["profile"] = profile(args)
        save()
        from solver.cuda.launch import SLOW_LAUNCHES

        result["slow_launches"] = dict(SLOW_LAUNCHES)
        _say(f"launches left to numba-cuda: {SLOW_LAUNCHES or 'none'}")
    if "timings" not in skip:
        result["timings"], result["launch_modes"] = [], []
        timings(args, deadline, result["timings"], save, result["launch_modes"])
        print(markdown(result["timings"]))
        if result["launch_modes"]:
            print()
            print(modes_markdown(result["launch_modes"]))
    if "convergence" not in skip and time.perf_counter() < deadline - 60.0:
        result["convergence"] = convergence(args)
        save()
    _say(f"done in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
