"""solver/kernel_cache.py: Numba's cache notices an edit of a module a cached kernel calls into,
and still loads a kernel whose sources did not change."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

from solver import kernel_cache
from solver.methods import gauss_seidel

REPO = Path(__file__).resolve().parents[2]

# Runs pkg.user.total() (a cached kernel calling pkg.dep.value) and prints "value hits misses".
SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "ours":
        from solver import kernel_cache
        assert kernel_cache.install(root=sys.argv[1], packages=("pkg",))
    from pkg.user import total
    value = total()
    print(value, total.stats.cache_hits.get(total.signatures[0], 0),
          total.stats.cache_misses.get(total.signatures[0], 0))
""")


def _package(tmp: Path, value: int) -> None:
    pkg = tmp / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "dep.py").write_text(textwrap.dedent(f"""
        from numba import njit

        @njit
        def value():
            return {value}
    """))
    (pkg / "user.py").write_text(textwrap.dedent("""
        from numba import njit

        from .dep import value

        @njit(cache=True)
        def total():
            return value() + 0
    """))


def _run(tmp: Path, mode: str, cache_dir: Path | None = None) -> tuple[int, int, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a .pyc stamped in the same second could hide an edit
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp), mode], env=env, cwd=tmp,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    value, hits, misses = out.stdout.split()
    return int(value), int(hits), int(misses)


def _edit_dependency(tmp: Path) -> None:
    """dep.py returns 2 now; user.py (the kernel's own file) is left untouched."""
    user = tmp / "pkg" / "user.py"
    before = user.stat().st_mtime_ns
    dep = tmp / "pkg" / "dep.py"
    dep.write_text(dep.read_text().replace("return 1", "return 2  # edited"))
    assert user.stat().st_mtime_ns == before


def test_an_edited_dependency_recompiles_and_an_unchanged_one_loads(tmp_path):
    _package(tmp_path, 1)
    assert _run(tmp_path, "ours") == (1, 0, 1)  # compiled and saved
    assert _run(tmp_path, "ours") == (1, 1, 0)  # loaded: the stamp is stable between runs
    _edit_dependency(tmp_path)
    assert _run(tmp_path, "ours")[0] == 2  # the edit is seen
    assert _run(tmp_path, "ours") == (2, 1, 0)


def test_a_user_cache_folder_is_served_alike(tmp_path):
    _package(tmp_path, 1)
    cache = tmp_path / "cache"
    assert _run(tmp_path, "ours", cache) == (1, 0, 1)
    assert _run(tmp_path, "ours", cache) == (1, 1, 0)
    assert any(cache.rglob("*.nbi")) and not (tmp_path / "pkg" / "__pycache__").exists()
    _edit_dependency(tmp_path)
    assert _run(tmp_path, "ours", cache)[0] == 2


def test_without_it_numba_loads_the_stale_kernel(tmp_path):
    """The limitation the module is for; should a Numba fix it, this fails and the module can
    go."""
    _package(tmp_path, 1)
    assert _run(tmp_path, "plain")[0] == 1
    _edit_dependency(tmp_path)
    assert _run(tmp_path, "plain")[0] == 1


def test_imports_are_followed_through_every_form(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__", "a", "b", "c", "d", "e", "unused", "sub/__init__", "sub/f",
                 "sub/g"):
        (pkg / f"{name}.py").write_text("")
    (pkg / "a.py").write_text(textwrap.dedent("""
        from __future__ import annotations
        import numpy as np
        from .b import thing  # c is named in this comment only
        from . import \\
            d
        from pkg.sub import (f,  # a comment naming unused
                             g)
        import os, pkg.e as e  # unused is named here only
    """))
    (pkg / "sub" / "g.py").write_text("from ..c import x\n")
    found = kernel_cache.dependencies(pkg / "a.py", tmp_path.resolve(), ("pkg",))
    names = sorted(str(p.relative_to(tmp_path.resolve())) for p in found)
    assert names == ["pkg/__init__.py", "pkg/b.py", "pkg/c.py", "pkg/d.py", "pkg/e.py",
                     "pkg/sub/__init__.py", "pkg/sub/f.py", "pkg/sub/g.py"]


def test_the_sweeps_in_blocks_depend_on_the_contact_update():
    """The case that was stale: the frictional sweep in blocks inlines sweeps.frictional_range."""
    found = {p.relative_to(kernel_cache.ROOT).as_posix()
             for p in kernel_cache.dependencies(gauss_seidel.__file__)}
    assert {"solver/methods/sweeps.py", "solver/problem.py", "solver/coulomb.py"} <= found
    assert not any(name.startswith(("lab/", "app/")) for name in found)


def test_the_project_installs_it_and_leaves_other_files_alone():
    assert numba.config.CACHE_LOCATOR_CLASSES == ",".join(kernel_cache.LOCATORS)
    # Installed before the project's kernels were decorated: they carry our locator.
    for twin in (gauss_seidel.frictional_sweeps.serial, gauss_seidel.frictional_sweeps.parallel,
                 gauss_seidel.relaxed_range):
        assert isinstance(twin._cache._impl.locator, kernel_cache._DependentStamp)
    assert kernel_cache.dependency_stamp(gauss_seidel.__file__) is not None
    assert kernel_cache.dependency_stamp(numba.__file__) is None


def test_a_locator_list_the_user_chose_is_kept_with_a_warning(monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_LOCATOR_CLASSES", "UserWideCacheLocator")
    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_LOCATOR_CLASSES='UserWideCacheLocator'"):
        assert not kernel_cache.install()
    assert numba.config.CACHE_LOCATOR_CLASSES == "UserWideCacheLocator"
