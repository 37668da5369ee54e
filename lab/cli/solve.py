"""`marbles-bench solve`: one solver on a saved contact problem, whichever format holds it: an
LCP snapshot (.npz, `run --save-lcp`) or an FCLIB local 3D problem (.hdf5 or .h5, any tool's).
The format comes from the option that names the file (--lcp, --fclib) or from its suffix; every
format is then solved by the same steps, and the trace printed (and written to --json). With
friction the trace ends with what the answer is checked for beyond its residual: the last
iteration's change split into what the velocities see and what they do not (solver/drift.py),
and whether the problem has a solution at all (solver/existence.py)."""
from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solver.contact_states import contact_states, pseudo_solution, pseudo_text, states_text
from solver.drift import drift, drift_between
from solver.existence import BUDGET, LIMIT, existence
from solver.methods import registry
from solver.options import AUTO_MARBLES, DEVICE, ITERATIONS, auto_device, check_device
from solver.params import Param, ParamError, parse_assignments
from solver.warmup import warmup

from ..io.fclib import read_fclib
from ..io.files import check_writable, write_json
from ..io.snapshot import load_lcp
from ..report.compare import FRICTIONAL_METRIC, METRIC
from ..session.spec import SOLVER
from . import options as cli

SUFFIXES = {".npz": "lcp", ".hdf5": "fclib", ".h5": "fclib"}
DRIFT = Param("drift", 0, int, "after the solve, N more iterations of the same solver from its "
              "answer, every one of them: how far the impulses and the velocities still move, "
              "and whether the impulses drift in W's null space where the velocities have "
              "converged (solver/drift.py; 0: off)", lo=0, hi=10**7)
NO_EXISTENCE_HELP = (
    "skip the existence test of a frictional problem (solver/existence.py: one or two linear "
    "programs with HiGHS, milliseconds on a few contacts, about 6 s on the 1048 contacts of the "
    "frozen bowl of 350 and 40 s on its FCLIB export, whose explicit W is denser than the "
    "snapshot's Jacobian; --existence-seconds bounds it, --existence-contacts skips it above a "
    "size)")
PROGRESS_CONTACTS = 200  # from here the test says on stderr which program runs
# Where a file of each format keeps the impulses --start stored starts from.
STORED = {"lcp": "lam", "fclib": "/solution/r or /guesses/1/r"}


@dataclass(frozen=True)
class Loaded:
    """A contact problem read from `path` in `kind` ('lcp' or 'fclib'); extras as its reader
    gives them ({"lam": stored impulses (N s) or None, ...})."""

    path: str
    kind: str
    problem: object
    extras: dict

    @property
    def frictional(self) -> bool:
        return self.kind == "fclib" or self.problem.frictional


def source(args: argparse.Namespace) -> tuple[str, str]:
    """(path, kind) of the file to solve: --lcp or --fclib, else FILE by its suffix."""
    if args.lcp is not None:
        return args.lcp, "lcp"
    if args.fclib is not None:
        return args.fclib, "fclib"
    kind = SUFFIXES.get(Path(args.file).suffix.lower())
    if kind is None:
        raise ParamError(f"{args.file}: unknown format; a .npz LCP snapshot, a .hdf5 or .h5 "
                         "FCLIB file, or say which with --lcp or --fclib")
    return args.file, kind


def load(path: str, kind: str) -> Loaded:
    problem, extras = (load_lcp if kind == "lcp" else read_fclib)(path)
    return Loaded(path, kind, problem, extras)


def _compile(name: str, method, loaded: Loaded, lam0: np.ndarray, settings,
             device: str) -> float | None:
    """Compile solver `name`'s kernels, untimed: the seconds it took for an LCP snapshot on the
    CPU (the matrix-free kernels of solver.warmup); for an FCLIB file or on the GPU, on this
    very problem (neither is in solver.warmup), seconds not recorded (None)."""
    if loaded.kind == "lcp" and device == "cpu":
        return warmup([name])
    method.solve(loaded.problem.copy(), lam0.copy(), dataclasses.replace(settings, iterations=2))
    return None


def cmd_solve(args: argparse.Namespace) -> int:
    """Solver --solver on the loaded problem from zero or the stored impulses (N s); prints the
    residual (m/s) after every iteration, with FCLIB's error for an FCLIB file."""
    settings = registry.settings(args.solver, args.iterations, True,
                                 parse_assignments(args.assignments))
    more = int(DRIFT.parse(args.drift))  # a bad count is refused before any work
    BUDGET.parse(args.existence_seconds)
    LIMIT.parse(args.existence_contacts)
    if args.json is not None:
        check_writable(args.json)
    loaded = load(*source(args))
    problem, stored = loaded.problem, loaded.extras["lam"]
    registry.check_friction(args.solver, loaded.frictional)
    if args.start == "stored" and stored is None:
        raise ParamError(f"--start stored: {loaded.path} has no usable {STORED[loaded.kind]}")
    size = problem.size if loaded.frictional else problem.m
    lam0 = stored.copy() if args.start == "stored" else np.zeros(size)
    device = _device(args, loaded)
    if device == "cuda":
        from solver.cuda.frozen import FrozenSolver

        method = FrozenSolver(args.solver)
    else:
        method = registry.get(args.solver)
    compile_seconds = _compile(args.solver, method, loaded, lam0, settings, device)
    errors = None
    if loaded.kind == "fclib":  # FCLIB's own error after every iteration, beside the residual
        errors = [problem.fclib_error(lam0)]
    ends = Ends(lam0) if device != "cuda" else None  # the GPU keeps its iterates
    if errors is not None or (ends is not None and loaded.frictional):
        settings = dataclasses.replace(settings, observer=_observer(problem, errors, ends))
    result = method.solve(problem, lam0.copy(), settings)
    if errors is not None:
        errors += [np.inf] * (result.trace.size - len(errors))
    checks = _checks(args, loaded, method, settings, result, ends)
    lines = _lines(args, loaded, settings, result, errors, device) + checks.lines()
    moved = drift(problem, method, settings, result.lam, more) if more else None
    print("\n".join(lines + ([moved.text()] if moved is not None else [])))
    if args.json is not None:
        report = _json(args, loaded, settings, result, errors, compile_seconds, device)
        if loaded.frictional:
            report.update(checks.as_dict())
        if moved is not None:
            report["drift"] = moved.as_dict()
        write_json(args.json, report)
    return 0


class Ends:
    """The last two iterates a solve's observer saw (N s, (size,) each): `before` starts as λ0,
    so one iteration gives the change from the start."""

    def __init__(self, lam0: np.ndarray):
        self.before = np.array(lam0, dtype=np.float64)
        self.last = self.before.copy()
        self.seen = 0

    def see(self, lam: np.ndarray) -> None:
        self.before, self.last = self.last, self.before
        np.copyto(self.last, lam)
        self.seen += 1


def _observer(problem, errors: list | None, ends: Ends | None):
    """One observer for FCLIB's error trace and the last two iterates, whichever are kept."""
    def observe(lam: np.ndarray) -> None:
        if errors is not None:
            errors.append(problem.fclib_error(lam))
        if ends is not None:
            ends.see(lam)
    return observe


@dataclass(frozen=True)
class Checks:
    """What a frictional solve's answer is checked for beyond its residual: `step`, the last
    iteration's change split into what the velocities see and what they do not (a Drift over 1
    iteration; on the GPU, one more iteration's, from the answer), and `exists`, the problem's
    strict-feasibility test (solver/existence.py); either None where not measured."""

    step: object = None
    step_text: str = ""
    exists: object = None
    pseudo: dict | None = None  # contact_states.pseudo_solution's finding
    skipped: str = ""  # why the existence test did not run, where it was skipped for size

    def lines(self) -> list[str]:
        return ([self.step_text] if self.step is not None else []) + (
            [pseudo_text(self.pseudo)] if self.pseudo is not None else []) + (
            [self.exists.text()] if self.exists is not None else []) + (
            [self.skipped] if self.skipped else [])

    def as_dict(self) -> dict:
        return {"last_iteration": None if self.step is None else self.step.as_dict(),
                "pseudo_solution": self.pseudo,
                "existence": None if self.exists is None else self.exists.as_dict(),
                **({"existence_skipped": self.skipped} if self.skipped else {})}


def _checks(args, loaded: Loaded, method, settings, result, ends: Ends | None) -> Checks:
    """The Checks of a frictional solve (none without friction). The last iteration's change
    is that of the answer found: not measured after a divergence fell back to the start."""
    if not loaded.frictional:
        return Checks()
    problem = loaded.problem
    step, which = None, "last iteration"
    if ends is None:
        step, which = drift(problem, method, settings, result.lam, 1), "next iteration"
    elif ends.seen and np.array_equal(ends.last, result.lam):
        step = drift_between(problem, ends.before, ends.last, 1)
    text = "" if step is None else (
        f"{which}: velocities moved {step.velocity_change:.3e} m/s, impulses "
        f"{step.impulse_change:.3e} N s ({step.impulse_share:.2e} of ‖λ‖; seen "
        f"{step.seen:.1e}); {step.verdict}")
    states = contact_states(problem, result.lam, result.residual)
    pseudo = pseudo_solution(states, result.trace, settings["abs_tol"])
    exists, skipped = _existence(args, problem)
    return Checks(step, text, exists, pseudo, skipped)


def _existence(args, problem) -> tuple[object, str]:
    """(the existence test's result or None, the line saying why it was skipped or '')."""
    if args.no_existence:
        return None, ""
    seconds = BUDGET.parse(args.existence_seconds)
    limit = LIMIT.parse(args.existence_contacts)
    if problem.m > limit:
        return None, (f"existence: skipped, {problem.m} contacts is above "
                      f"--existence-contacts {limit} (raise it to run the test, within "
                      f"--existence-seconds {seconds:g})")
    tell = None if problem.m < PROGRESS_CONTACTS else (
        lambda line: print(line + " ...", file=sys.stderr, flush=True))
    return existence(problem, seconds=seconds, progress=tell), ""


def _device(args: argparse.Namespace, loaded: Loaded) -> str:
    """Where the solve runs: --device, auto resolved (the GPU for a solver that runs there on a
    problem of enough marbles); ParamError (one line) for a GPU that cannot run it here."""
    device = str(DEVICE.parse(args.device))
    if device == "cpu":
        return device
    if device == "auto":
        settings = registry.settings(args.solver)
        return auto_device(settings, loaded.problem.n) if loaded.kind == "lcp" else "cpu"

    if loaded.kind == "fclib":
        raise ParamError("--device cuda: an FCLIB file holds W, not marbles, and the GPU's "
                         "kernels solve over marbles; use --device cpu")
    check_device(registry.settings(args.solver), "cuda")
    return device


def _lines(args, loaded: Loaded, settings, result, errors: list | None,
           device: str) -> list[str]:
    """The printed trace: a header, one line per iteration, the outcome."""
    problem, path = loaded.problem, loaded.path
    start = f"; {args.solver}, {settings.iterations} iterations from {args.start} impulses"
    if device == "cuda":
        start += " on the GPU"
    if errors is None:
        stored = _stored_residual(loaded)
        lines = [f"# {path}: {problem.m} contacts, {problem.n} marbles" + start,
                 "# iteration  residual_m_per_s  seconds"]
        lines += [f"{k:6d}  {r:.6e}  {s:.6e}" for k, (r, s)
                  in enumerate(zip(result.trace, result.seconds))]
        states = ""
        if loaded.frictional:
            states = (f", FCLIB error {problem.fclib_error(result.lam):.6e}; "
                      + states_text(contact_states(problem, result.lam, result.residual)))
        return lines + [f"{args.solver}: {result.status} after {result.iterations} iterations, "
                        f"residual {result.residual:.6e} m/s"
                        + ("" if stored is None else f" (stored lam: {stored:.6e} m/s)")
                        + states]
    title = loaded.extras["title"]
    lines = [f"# {path}: FCLIB local 3D problem, {problem.m} contacts"
             + (f" ({title})" if title else "") + start,
             "# iteration  residual_m_per_s  fclib_error  seconds"]
    lines += [f"{k:6d}  {r:.6e}  {f:.6e}  {s:.6e}" for k, (r, f, s)
              in enumerate(zip(result.trace, errors, result.seconds))]
    return lines + [f"{args.solver}: {result.status} after {result.iterations} iterations, "
                    f"residual {result.residual:.6e} m/s, FCLIB error "
                    f"{problem.fclib_error(result.lam):.6e}; "
                    f"{states_text(contact_states(problem, result.lam, result.residual))}"]


def _json(args, loaded: Loaded, settings, result, errors: list | None,
          compile_seconds: float | None, device: str) -> dict:
    """--json: the trace, the outcome and the final impulses, with what each format adds."""
    problem = loaded.problem
    if errors is not None:
        return {"fclib": str(loaded.path), "title": loaded.extras["title"],
                "solver": args.solver, "device": device, "contacts": problem.m,
                "start": args.start,
                "settings": {"iterations": settings.iterations, **settings.params},
                "trace": result.trace.tolist(), "fclib_error": [float(e) for e in errors],
                "seconds": result.seconds.tolist(), "iterations": result.iterations,
                "status": result.status, "residual": result.residual,
                "final_fclib_error": problem.fclib_error(result.lam),
                "contact_states": contact_states(problem, result.lam, result.residual),
                "lam": result.lam.tolist(), "info": result.info}
    return {"lcp": str(loaded.path), "solver": args.solver, "device": device,
            "contacts": problem.m,
            "marbles": problem.n, "start": args.start,
            "settings": {"iterations": settings.iterations, **settings.params},
            "metric": FRICTIONAL_METRIC if loaded.frictional else METRIC,
            **({"rows": problem.rows, "fclib_error": problem.fclib_error(result.lam),
                "contact_states": contact_states(problem, result.lam, result.residual)}
               if loaded.frictional else {}),
            "trace": result.trace.tolist(), "seconds": result.seconds.tolist(),
            "iterations": result.iterations, "status": result.status,
            "residual": result.residual, "lam": result.lam.tolist(),
            "stored_lam_residual": _stored_residual(loaded), "info": result.info,
            "compile_seconds": compile_seconds}


def _stored_residual(loaded: Loaded) -> float | None:
    """The residual (m/s) of the impulses an LCP snapshot stores, or None without them."""
    stored = loaded.extras["lam"]
    return None if stored is None else float(loaded.problem.residual(stored))


def add_parser(sub) -> None:
    p = sub.add_parser(
        "solve", help="run one solver on a saved LCP snapshot or FCLIB file and print its trace",
        description="Load an LCP snapshot (written by `run --save-lcp`; it must carry the "
                    "contact geometry) or an FCLIB local 3D problem (any tool's), run solver M "
                    "from zero (or the stored impulses) and print the residual after every "
                    "iteration.")
    source_ = p.add_mutually_exclusive_group(required=True)
    source_.add_argument("file", nargs="?", metavar="FILE",
                         help="the problem, its format from the suffix: .npz (LCP snapshot), "
                              ".hdf5 or .h5 (FCLIB)")
    source_.add_argument("--lcp", metavar="FILE", help="LCP snapshot (.npz)")
    source_.add_argument("--fclib", metavar="FILE",
                         help="FCLIB local 3D problem (.hdf5, from run --save-fclib or another "
                              "tool); the trace adds FCLIB's error after each iteration")
    cli.option(p, SOLVER, "M")
    cli.option(p, ITERATIONS, "N")
    cli.option(p, DEVICE, "D", help_text="where the solver runs: cpu (default), cuda (the GPU: "
               f"{', '.join(registry.on_device('cuda'))} on an LCP snapshot; one launch per "
               "iteration, the residual read between them) or auto (cuda from "
               f"{AUTO_MARBLES} marbles when the GPU can run the solver)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   dest="assignments", help="solver parameter, repeatable")
    p.add_argument("--start", choices=("zero", "stored"), default="zero",
                   help="start from zero impulses (default) or from the snapshot's lam")
    cli.option(p, DRIFT, "N")
    p.add_argument("--no-existence", action="store_true", help=NO_EXISTENCE_HELP)
    cli.option(p, BUDGET, "S")
    cli.option(p, LIMIT, "N")
    p.add_argument("--json", metavar="FILE", help="write the trace and status as JSON")
    p.set_defaults(func=cmd_solve)
