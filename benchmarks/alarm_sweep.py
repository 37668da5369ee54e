"""Which scene × solver × friction raises an alarm at the default settings, and whether the
recover key (X) then holds the scene: each run is a headless Session (the window's own
judgements: a divergence, energy gained from nowhere, marbles out of the container) stepped
`--steps` times; after an alarm, X, then as many steps again. Prints one row per run that
alarmed and a count; --json writes every run.

    python -m benchmarks.alarm_sweep
    python -m benchmarks.alarm_sweep --scenes mass-ratio,heap --solvers pgs,apgd --steps 150
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass

import scenes
from lab.session import commands as cmd
from lab.session.holding import settings_text
from lab.session.session import Session
from lab.session.spec import RunSpec
from lab.session.watch import physics_check
from solver.methods import registry
from solver.params import ParamError

# The frictions of the sweep: none, and Coulomb's 0.5 between marbles and at the walls; a
# scene whose own default has friction runs at it too.
FRICTIONS = ("0", "0.5", "default")
STEPS = 150


@dataclass(frozen=True)
class Outcome:
    """One run: its alarm ("" when none) and the step it came at (0: none); after X, the
    settings X chose (solver and iterations) and the alarm of as many steps again."""

    scene: str
    solver: str
    friction: str
    alarm: str = ""
    step: int = 0
    recovered_to: str = ""
    after_recover: str = ""
    seconds: float = 0.0


def friction_settings(scene: str, friction: str) -> dict | None:
    """The --set values of `friction` on `scene` (None: the scene's default is that already)."""
    names = {p.name for p in scenes.get(scene).params}
    if friction == "default":
        return {} if scenes.get(scene).frictional else None
    mu = float(friction)
    values = {"mu": mu}
    if "mu_wall" in names:
        values["mu_wall"] = mu
    if mu == 0.0:
        values.update(mu_roll=0.0, mu_spin=0.0)
    return values


def cases(scene_names, solver_names, frictions=FRICTIONS):
    """(scene, solver, friction, --set values) of every run the sweep makes: a frictionless-only
    solver runs without friction only."""
    for scene in scene_names:
        for friction in frictions:
            values = friction_settings(scene, friction)
            if values is None:
                continue
            frictional = scenes.has_friction({**_defaults(scene), **values})
            for solver in solver_names:
                if frictional and not registry.get(solver).friction:
                    continue
                yield scene, solver, friction, values


def _defaults(scene: str) -> dict:
    return {p.name: p.default for p in scenes.get(scene).params}


def alarm_of(session: Session) -> str:
    """The Session's alarm, or the escaped marbles' warning, "" when neither."""
    if session.alarm:
        return session.alarm
    check = physics_check(session.world)
    return check.text() if check.escaped else ""


def step_until_alarm(session: Session, steps: int) -> int:
    """Step up to `steps` times, stopping at an alarm; returns the step it came at (0: none)."""
    for k in range(steps):
        session.step()
        if session.alarm:
            return k + 1
    return steps if alarm_of(session) else 0


def run_case(scene: str, solver: str, friction: str, values: dict,
             steps: int = STEPS) -> Outcome:
    """One run of the sweep, and X after an alarm (see Outcome)."""
    started = time.perf_counter()
    session = Session(RunSpec.create(scene, solver, assignments=dict(values), speed=0))
    session.start()
    at = step_until_alarm(session, steps)
    if not at:
        return Outcome(scene, solver, friction, seconds=time.perf_counter() - started)
    alarm = alarm_of(session)
    session.apply(cmd.Recover())
    chosen = settings_text(session.spec.solve)
    again = alarm_of(session) if step_until_alarm(session, steps) else ""
    return Outcome(scene, solver, friction, alarm, at, chosen, again,
                   time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.alarm_sweep",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", default=",".join(scenes.SCENES),
                        help="comma-separated scenes (default all)")
    parser.add_argument("--solvers", default=",".join(registry.METHODS),
                        help="comma-separated solvers (default all)")
    parser.add_argument("--frictions", default=",".join(FRICTIONS),
                        help=f"comma-separated, of {', '.join(FRICTIONS)} (default all)")
    parser.add_argument("--steps", type=int, default=STEPS, help=f"steps (default {STEPS})")
    parser.add_argument("--json", help="write every run's outcome here")
    args = parser.parse_args(argv)
    try:
        scene_names = [scenes.get(s).name for s in args.scenes.split(",") if s]
        solver_names = [registry.get(s).name for s in args.solvers.split(",") if s]
    except (ParamError, KeyError) as error:
        print(f"alarm_sweep: {error}", file=sys.stderr)
        return 2
    frictions = [f for f in args.frictions.split(",") if f]
    if set(frictions) - set(FRICTIONS) or args.steps < 1:
        parser.error(f"--frictions takes {', '.join(FRICTIONS)}; --steps at least 1")
    outcomes = []
    print("| scene | solver | friction | alarm at step | alarm | X chose | after X |")
    print("|---|---|---|---|---|---|---|")
    for scene, solver, friction, values in cases(scene_names, solver_names, frictions):
        outcome = run_case(scene, solver, friction, values, args.steps)
        outcomes.append(outcome)
        print(f"{scene} {solver} {friction}: {'alarm' if outcome.alarm else 'ok'} "
              f"({outcome.seconds:.1f} s)", file=sys.stderr, flush=True)
        if outcome.alarm:
            print(f"| {scene} | {solver} | {friction} | {outcome.step} | {outcome.alarm} | "
                  f"{outcome.recovered_to} | {outcome.after_recover or 'no alarm'} |",
                  flush=True)
    alarmed = [o for o in outcomes if o.alarm]
    held = [o for o in alarmed if not o.after_recover]
    print(f"{len(outcomes)} runs of {args.steps} steps: {len(alarmed)} alarmed; X held "
          f"{len(held)} of them")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([asdict(o) for o in outcomes], out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
