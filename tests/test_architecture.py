"""The house rules, read from the code: four layers whose imports go only downward
(app -> lab -> scenes -> solver), Qt only in app/, no import cycle, no module over 600 lines, no
function over 80 lines unless a `# long: <reason>` comment above it says why, and a test module
for every module."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solver", "scenes", "lab", "app", "shaders")
# What each layer may import from the project; everything below it, nothing above.
ALLOWED = {"solver": {"solver"}, "scenes": {"solver", "scenes"},
           "lab": {"solver", "scenes", "lab"}, "app": {"solver", "scenes", "lab", "app", "shaders"},
           "shaders": {"shaders"}}
GUI = {"PySide6", "shiboken6", "pyqtgraph", "OpenGL"}
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
# Modules whose tests live in another module's test file, and why.
TESTED_ELSEWHERE = {
    "lab/session/commands.py": "plain data; every command is applied in "
                               "tests/lab/session/test_session.py",
    "lab/session/friction_key.py": "the Session's friction key, pressed in "
                                   "tests/lab/session/test_session.py and the window's tests",
    "lab/session/copies.py": "the Session's side by side, commanded in "
                             "tests/lab/session/test_side_by_side.py",
    "lab/session/context.py": "every part's reach into the Session: the parts' tests, "
                              "tests/lab/session/test_side_by_side.py, test_history_commands.py",
    "app/benchmark_runs.py": "the B key, the history bar's solve and the benchmark on close: "
                             "tests/app/test_benchmark_window.py, test_history_bar.py",
    "app/main.py": "the command line of the window, run in tests/app/test_window.py",
    "solver/methods/psor.py": "PGS's kernel with ω; tests/solver/methods/test_pgs.py",
    "solver/methods/ppcg.py": "pcg's kernel preconditioned; tests/solver/methods/test_pcg.py",
    "solver/methods/proximal.py": "shared by the prox forms; test_prox_gs.py, test_prox_jacobi.py",
    "solver/methods/mprgp.py": "its convergence and counts: test_registry.py, test_pcg.py",
    "app/view/glsl.py": "compiled and drawn by the pixel tests, tests/app/view/test_widget.py",
    "app/view/renderer.py": "drawn by the pixel tests, tests/app/view/test_widget.py",
    "solver/cuda/assemble.py": "its rows solved on the CPU give the GPU's λ: "
                               "tests/solver/cuda/test_jacobi.py, test_apgd.py",
    "solver/cuda/backend.py": "the whole GPU step: tests/solver/cuda/test_jacobi.py (warm start, "
                              "repeats), test_collide.py, test_device.py (refusals, drag)",
    "solver/cuda/driver.py": "statuses on both paths: tests/solver/cuda/test_jacobi.py, "
                             "test_apgd.py",
    "solver/cuda/motion.py": "a dragged marble's path equals the CPU's: "
                             "tests/solver/cuda/test_device.py",
    "solver/cuda/colour.py": "the GPU's colours and order against the CPU's rule: "
                             "tests/solver/cuda/test_gauss_seidel.py",
}


def modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def name_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every module `path` imports, at any depth (a lazy import is still an arrow)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name_of(path) if path.name == "__init__.py" else name_of(path).rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base)
                target = f"{prefix}.{node.module}" if node.module else prefix
            else:
                target = node.module
            out.add(target)
            out.update(f"{target}.{alias.name}" for alias in node.names)
    return out


def project_graph() -> dict[str, set[str]]:
    names = {name_of(p) for p in modules()}
    graph = {}
    for path in modules():
        targets = set()
        for target in imports(path):
            # `from a.b import c` names a.b.c when c is a module, else a.b.
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != name_of(path):
                targets.add(target)
        graph[name_of(path)] = targets
    return graph


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_go_only_downward_and_qt_stays_in_app(path):
    layer = path.relative_to(ROOT).parts[0]
    for target in imports(path):
        top = target.split(".")[0]
        if top in PACKAGES:
            assert top in ALLOWED[layer], f"{layer} imports {target}"
        if top in GUI:
            assert layer == "app", f"{path.relative_to(ROOT)} imports {target}"


def test_there_is_no_import_cycle():
    graph = project_graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            # A package's __init__ importing its own submodules is not a cycle of the house.
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                if not all(n.startswith(nxt + ".") or n == nxt for n in cycle):
                    raise AssertionError("import cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_and_functions_stay_small(path):
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= MAX_MODULE_LINES, f"{len(lines)} lines"
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = node.end_lineno - node.lineno + 1
        if length <= MAX_FUNCTION_LINES:
            continue
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        above = lines[max(0, first - 3):first - 1]
        assert any(line.strip().startswith("# long:") for line in above), (
            f"{node.name}: {length} lines and no '# long: <reason>' comment above it")


@pytest.mark.parametrize("path", [p for p in modules() if p.name != "__init__.py"
                                  and p.relative_to(ROOT).parts[0] != "shaders"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_has_a_test_module(path):
    rel = path.relative_to(ROOT)
    if str(rel) in TESTED_ELSEWHERE:
        return
    test = ROOT / "tests" / rel.parent / f"test_{rel.name}"
    assert test.is_file(), f"no {test.relative_to(ROOT)}"


def test_the_checks_see_a_known_cycle(tmp_path, monkeypatch):
    """The cycle test can fail: on a graph with bench <-> report it names the cycle."""
    graph = {"lab.cli.bench": {"lab.report.results"}, "lab.report.results": {"lab.cli.bench"}}
    monkeypatch.setattr(__import__(__name__), "project_graph", lambda: graph, raising=False)
    monkeypatch.setitem(globals(), "project_graph", lambda: graph)
    with pytest.raises(AssertionError,
                       match="lab.cli.bench -> lab.report.results -> lab.cli.bench"):
        test_there_is_no_import_cycle()


def test_the_report_does_not_import_the_session():
    """lab.session uses lab.report (the B key's comparison), never the other way round."""
    back = sorted((module, dep) for module, deps in project_graph().items()
                  if module.startswith("lab.report") for dep in deps
                  if dep.startswith("lab.session"))
    assert not back, back
