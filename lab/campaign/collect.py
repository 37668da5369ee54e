"""Collections: frozen frictional problems as a folder of files plus `index.json`, laid out as
FCLIB's own library (one local problem per .hdf5 file). A problem with rolling or spinning
rows (6 per contact), which FCLIB's local problem cannot hold, is the lab's LCP snapshot (.npz,
the contact geometry W is built from). Any folder of FCLIB files, another tool's included, is a
collection too: without an index its files (and LCP snapshots with friction) are listed in name
order and their sizes read from the files.

A collection is built from a grid: every scene × seed × μ × size, each run once with PGS
(lab.report.friction_series.frozen_steps) and frozen at each listed step. File names and
contents depend only on the grid, so the same command writes the same bytes.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import scenes
from solver.params import ParamError, resolve

from ..io.fclib import explicit, read_fclib, save_fclib
from ..io.files import write_json
from ..io.snapshot import load_lcp, save_lcp
from ..report.friction_series import frozen_steps
from ..report.profiles import COLLECTION, _label

INDEX = "index.json"
FCLIB_SUFFIXES = (".hdf5", ".h5")
LCP_SUFFIX = ".npz"  # a problem with rolling rows
SUFFIXES = (*FCLIB_SUFFIXES, LCP_SUFFIX)
# Rolling and spinning resistance are off unless the grid sets them (heap has rolling by
# default): off, a problem is FCLIB's local problem, which every tool reads.
NO_ROLLING = {"mu_roll": 0.0, "mu_spin": 0.0}


@dataclass(frozen=True)
class Entry:
    """One problem of a collection: `file` relative to the folder; size: rows of W (3 per
    contact, 6 with rolling rows); mu: the largest friction coefficient of its contacts
    (unitless)."""

    file: str
    label: str
    contacts: int
    size: int
    mu: float


def grid_runs(scene_names: list[str], seeds: list[int], mus: list[float], sizes: list[int],
              fixed: dict) -> list[tuple[str, dict]]:
    """(scene, parameter overrides) of every run of the grid, in a fixed order; a seed or a
    size goes only to a scene that has that parameter (`seed`; `n`, else `layers`)."""
    runs = []
    for name in scene_names:
        have = {p.name for p in scenes.get(name).params}
        size_key = "n" if "n" in have else "layers" if "layers" in have else None
        for seed, mu, size in itertools.product(seeds if "seed" in have else [None], mus,
                                                sizes if size_key else [None]):
            params = {k: v for k, v in NO_ROLLING.items() if k in have}
            params.update({k: v for k, v in fixed.items() if k in have})
            params["mu"] = mu
            if "mu_wall" in have:
                params["mu_wall"] = mu
            if seed is not None:
                params["seed"] = seed
            if size is not None:
                params[size_key] = size
            run = (name, params)
            if run not in runs:
                runs.append(run)
    return runs


def file_name(scene: str, params: dict, step: int, suffix: str = ".hdf5") -> str:
    """'heap-mu0.5-n40-seed2-step50.hdf5': the scene, its overrides sorted, the step."""
    words = "-".join(f"{k.replace('_', '')}{v:g}" for k, v in sorted(params.items())
                     if k not in NO_ROLLING or v)
    return f"{scene}-{words}-step{step}{suffix}" if words else f"{scene}-step{step}{suffix}"


def read_problem(path: str | Path):
    """(problem, title) of a collection's file: an FCLIB local problem (MatrixProblem), or an
    LCP snapshot with friction (FrictionalProblem, its rolling rows included). ValueError (one
    line naming the file) for anything else."""
    path = Path(path)
    if path.suffix.lower() == LCP_SUFFIX:
        problem, _ = load_lcp(path)
        if not problem.frictional:
            raise ValueError(f"{path.name}: an LCP snapshot without friction (no mu); a "
                             "campaign compares frictional solvers")
        return problem, path.stem
    problem, extras = read_fclib(path)
    return problem, extras.get("title") or path.stem


def collect(out: Path, runs: list[tuple[str, dict]], steps: list[int],
            progress=None) -> list[Entry]:
    """Freeze every run of `runs` at `steps` into `out` (which exists), then write the index.
    ParamError (one line) for a bad scene parameter, before any file is written."""
    return collect_runs(out, [(name, params, tuple(steps)) for name, params in runs], progress)


def profile_runs() -> list[tuple[str, dict, tuple[int, ...]]]:
    """(scene, overrides, steps) of the performance profiles' problems (lab.report.profiles
    .COLLECTION): collected, they are the problems `report --part profiles` solves, with its
    labels."""
    return [(e.scene, dict(e.params), tuple(e.steps)) for e in COLLECTION]


def collect_runs(out: Path, runs: list[tuple[str, dict, tuple[int, ...]]],
                 progress=None) -> list[Entry]:
    """`collect` with steps of each run's own: runs are (scene, overrides, steps)."""
    resolved = [(name, params, resolve(scenes.get(name).params, params, f"scene {name}"), steps)
                for name, params, steps in runs]
    entries = []
    for k, (name, given, params, steps) in enumerate(resolved):
        for step, t, problem in frozen_steps(name, params, steps):
            label = _label(name, params, step) + (f" seed {given['seed']}" if "seed" in given
                                                  else "")
            if problem.m == 0:
                continue  # nothing touches yet: not a contact problem
            if problem.rows == 3:
                file = file_name(name, given, step)
                save_fclib(out / file, explicit(problem, title=label),
                           title=f"marbles: {label}",
                           description=f"{problem.n} marbles, {problem.m} contacts, simulated "
                                       f"time {t:.4f} s; scene parameters {json.dumps(params)}")
            else:
                file = file_name(name, given, step, LCP_SUFFIX)
                save_lcp(out / file, problem, np.zeros(problem.size))
            entries.append(Entry(file, label, problem.m, problem.size,
                                 float(np.max(problem.mu, initial=0.0))))
        if progress is not None:
            progress(k + 1, len(resolved))
    write_json(out / INDEX, {"problems": [e.__dict__ for e in entries]})
    return entries


def read_collection(folder: str | Path) -> list[Entry]:
    """The entries of a collection: its index, else every FCLIB file in it by name (reading
    each file for its size and μ). ParamError (one line) for a folder that is none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ParamError(f"collection {str(folder)!r}: not a folder")
    index = folder / INDEX
    if index.is_file():
        try:
            entries = [Entry(**e) for e in json.loads(index.read_text())["problems"]]
        except (ValueError, KeyError, TypeError) as err:
            raise ParamError(f"collection {str(folder)!r}: unreadable {INDEX} ({err})") from None
    else:
        entries = []
        for path in sorted(p for p in folder.iterdir() if p.suffix.lower() in SUFFIXES):
            try:
                problem, title = read_problem(path)
            except ValueError:
                if path.suffix.lower() == LCP_SUFFIX:
                    continue  # an npz that is no frictional problem is not the collection's
                raise
            entries.append(Entry(path.name, title, problem.m, problem.size,
                                 float(np.max(problem.mu, initial=0.0))))
    if not entries:
        raise ParamError(f"collection {str(folder)!r}: no FCLIB files (.hdf5, .h5) or LCP "
                         "snapshots with friction (.npz) in it")
    return entries
