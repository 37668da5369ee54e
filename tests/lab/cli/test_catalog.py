"""The listings come from the declarations: every scene, solver and parameter appears, with its
default, unit and range, in `marbles-bench list`, the README tables and docs/parameters.md."""
from __future__ import annotations

import scenes
from lab.cli import catalog
from solver.methods import registry
from solver.methods.driver import COMMON_PARAMS


def all_declared():
    for scene in scenes.SCENES.values():
        yield from scene.params
    for method in registry.METHODS.values():
        yield from method.params
    yield from COMMON_PARAMS
    yield from catalog.SIM_PARAMS
    yield from catalog.RUN_OPTIONS


def test_list_has_a_line_for_every_declared_parameter():
    text = catalog.list_text()
    lines = text.splitlines()
    for p in all_declared():
        assert p.describe() in lines or f"      {p.describe()}" in lines, p.name
    for name in (*scenes.SCENES, *registry.METHODS):
        assert f"  {name} " in text


def test_markdown_tables_have_a_row_for_every_scene_and_solver_with_its_defaults():
    scene_rows = catalog.scenes_markdown().splitlines()[2:]
    assert [r.split("|")[1].strip() for r in scene_rows[:-1]] == [f"`{s}`"
                                                                 for s in scenes.SCENES]
    solver_rows = catalog.solvers_markdown().splitlines()[2:]
    assert [r.split("|")[1].strip() for r in solver_rows[:-1]] == [f"`{m}`"
                                                                  for m in registry.METHODS]
    omega = next(r for r in solver_rows if r.startswith("| `psor`"))
    assert "`omega`=1.5" in omega and "| yes |" in omega
    assert "| no |" in next(r for r in solver_rows if r.startswith("| `pcg`"))
    # Material parameters once, for every scene; a scene lists the ones it sets otherwise.
    assert "`damping`=0 1/s" in scene_rows[-1] and "`mu`=0," in scene_rows[-1]
    assert "`mu`=0.5" in next(r for r in scene_rows if r.startswith("| `heap`"))
    assert "mu" not in next(r for r in scene_rows if r.startswith("| `bowl`"))


def test_the_parameter_reference_names_every_parameter_with_range_and_unit():
    text = catalog.parameters_markdown()
    for p in all_declared():
        assert f"| `{p.name}` | {p.range_text()} | {p.default_text()} | {p.unit or '—'} |" in text
