"""`marbles-bench report`: its options, each validated before any work, and the command line that
reproduces a report; lab.report.results measures and writes."""
from __future__ import annotations

import argparse

import scenes
from solver.params import Param, ParamError

from ..report import results
from ..report.compare import COMPARE_ITERATIONS, REPEATS, SETTLE, parse_solver_list
from ..report.exits import EXIT_ITERATIONS, EXIT_SCENE, EXIT_STEPS, FRICTION_EXIT_STEPS
from ..report.friction_series import FRICTION_SCENES
from ..report.profiles import BUDGET as PROFILE_BUDGET
from ..report.results import BUDGETS, PARTS
from ..report.series import SERIES_STEPS

DEFAULT_SCENES = ("bowl", "disk", "column", "mass-ratio")
EXIT_STEPS_PARAM = Param("exit-steps", EXIT_STEPS, int, "consecutive steps of the exit-status "
                         f"experiments (default {EXIT_STEPS} without friction, "
                         f"{FRICTION_EXIT_STEPS} with)", lo=1, hi=10**6)
EXIT_ITERATIONS_PARAM = Param("exit-iterations", EXIT_ITERATIONS, int, "iteration limit per "
                              "solve there", lo=1, hi=10**6)
SCENE_LIST_HELP = f"comma-separated scenes (default {','.join(DEFAULT_SCENES)})"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report", help="regenerate results/RESULTS.md: tables, plots and verdicts",
        description="Compare every registered solver on a frozen step of each scene, run "
                    "Erleben's exit-status experiment, judge every claim of the sources from "
                    "the measurements, and write DIR/RESULTS.md with its plots.")
    p.add_argument("--out", default="results", metavar="DIR",
                   help="output folder, created if needed (default results)")
    p.add_argument("--scenes", default=",".join(DEFAULT_SCENES), metavar="a,b,...",
                   help=SCENE_LIST_HELP)
    p.add_argument("--solvers", metavar="a,b,...", help="solvers (default: all registered)")
    p.add_argument("--iterations", metavar="N",
                   help="iterations per solver for every scene (default: per scene, "
                        + ", ".join(f"{s} {p.iterations}" for s, p in BUDGETS.items()) + ")")
    p.add_argument("--settle", metavar="K",
                   help="steps before the frozen one for every scene (default: per scene, "
                        + ", ".join(f"{s} {p.settle}" for s, p in BUDGETS.items()) + ")")
    p.add_argument("--exit-scene", default=EXIT_SCENE, metavar="S",
                   help=f"scene of the exit-status experiment, or none (default {EXIT_SCENE})")
    p.add_argument("--exit-steps", metavar="K",  # its default depends on the part: said once
                   help=f"{EXIT_STEPS_PARAM.help}; {EXIT_STEPS_PARAM.range_text()}")
    p.add_argument("--exit-iterations", default=str(EXIT_ITERATIONS), metavar="N",
                   help=EXIT_ITERATIONS_PARAM.help_text())
    p.add_argument("--repeats", default=REPEATS.value_text(), metavar="R",
                   help=REPEATS.help_text())
    p.add_argument("--series", default="default", choices=("default", "none"),
                   help="judge the claims on several frozen steps of each scene that has a "
                        "series (" + "; ".join(f"{s}: steps {', '.join(map(str, steps))}"
                                               for s, steps in SERIES_STEPS.items())
                        + "), or none (default: default)")
    p.add_argument("--part", default="all", choices=PARTS,
                   help="run only the frictionless part (the article's scenes, their snapshots "
                        "and exit statuses), only the frictional one, or only the performance "
                        "profiles (their section and numbers put into an existing RESULTS.md "
                        "and results.json, the rest kept); default all")
    p.add_argument("--profiles", default="default", choices=("default", "none"),
                   help="the performance profiles of the frictional solvers on the collection "
                        "of frozen frictional steps, or none (default: default)")
    p.add_argument("--profile-budget", default=PROFILE_BUDGET.value_text(), metavar="S",
                   help=PROFILE_BUDGET.help_text())
    p.add_argument("--friction-scenes", default=",".join(FRICTION_SCENES), metavar="a,b,...",
                   help="frictional scenes of the frictional part, or none (default "
                        + ", ".join(f"{k}: steps {', '.join(map(str, f.steps))}"
                                    for k, f in FRICTION_SCENES.items()) + ")")
    p.add_argument("--campaign", metavar="DIR",
                   help="instead of measuring, draw the performance profiles and a table of a "
                        "campaign's table (`marbles-bench campaign --out DIR`) into "
                        "DIR/REPORT.md, DIR/profiles.json and DIR/friction-profiles/profile.png")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_report)


def _scene_list(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",")]
    if not all(names):
        raise ParamError(f"--scenes {text!r} has an empty name; valid: {', '.join(scenes.SCENES)}")
    for name in names:
        scenes.get(name)
    if len(set(names)) != len(names):
        raise ParamError(f"--scenes {text!r} lists a scene twice")
    return names


def _command_line(args: argparse.Namespace) -> str:
    """The command that reproduces this report (options left at their default are omitted)."""
    words = ["marbles-bench report"]
    defaults = {"out": "results", "scenes": ",".join(DEFAULT_SCENES), "solvers": None,
                "iterations": None, "settle": None, "exit_scene": EXIT_SCENE,
                "exit_steps": None, "exit_iterations": str(EXIT_ITERATIONS),
                "repeats": "3", "series": "default", "part": "all",
                "friction_scenes": ",".join(FRICTION_SCENES), "profiles": "default",
                "profile_budget": PROFILE_BUDGET.value_text()}
    for name, default in defaults.items():
        value = getattr(args, name)
        if value is not None and value != default:
            words.append(f"--{name.replace('_', '-')} {value}")
    return " ".join(words)


def _options(args: argparse.Namespace) -> dict:
    """Every option validated before any work (one-line ParamError)."""
    exit_scene = None if args.exit_scene == "none" else args.exit_scene
    if exit_scene is not None:
        scenes.get(exit_scene)
    return {"scenes": _scene_list(args.scenes), "solvers": parse_solver_list(args.solvers),
            "iterations": None if args.iterations is None
            else int(COMPARE_ITERATIONS.parse(args.iterations)),
            "settle": None if args.settle is None else int(SETTLE.parse(args.settle)),
            "repeats": int(REPEATS.parse(args.repeats)), "exit_scene": exit_scene,
            "exit_steps": None if args.exit_steps is None
            else int(EXIT_STEPS_PARAM.parse(args.exit_steps)),
            "exit_iterations": int(EXIT_ITERATIONS_PARAM.parse(args.exit_iterations)),
            "series": args.series == "default", "part": args.part,
            "friction_scenes": parse_friction_scenes(args.friction_scenes),
            "profiles": _profiles_wanted(args),
            "profile_budget": float(PROFILE_BUDGET.parse(args.profile_budget))}


def _profiles_wanted(args: argparse.Namespace) -> bool:
    if args.part == "profiles" and args.profiles == "none":
        raise ParamError("--part profiles --profiles none measures nothing")
    return args.profiles == "default"


def parse_friction_scenes(text: str) -> list[str]:
    """'a,b' -> labels of FRICTION_SCENES, or [] for 'none'; ParamError (one line) else."""
    if text.strip() == "none":
        return []
    names = [s.strip() for s in text.split(",")]
    for name in names:
        if name not in FRICTION_SCENES:
            raise ParamError(f"--friction-scenes: unknown frictional scene {name!r}; valid: "
                             f"{', '.join(FRICTION_SCENES)}, or none")
    if len(set(names)) != len(names):
        raise ParamError(f"--friction-scenes {text!r} lists a scene twice")
    return names


def cmd_report(args: argparse.Namespace) -> int:
    """Run the report the options ask for (lab.report.results.run), or a campaign's."""
    if args.campaign is not None:
        from ..campaign.report import report

        profiles, path = report(args.campaign)
        print(f"report: profiles of {len(profiles.solvers)} runs on {len(profiles.problems)} "
              f"problems from {args.campaign}; wrote {path}")
        return 0
    return results.run(_options(args), args.out, _command_line(args), args.quiet)
