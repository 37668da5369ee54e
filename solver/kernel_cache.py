"""Numba's on-disk cache, made to notice edits of the modules a kernel calls into.

Numba stamps a cached kernel with its own source file only (a documented limitation: changes
in symbols defined in another file are not seen). Our kernels inline functions of other modules
(the blocked sweeps inline sweeps.frictional_range, every row kernel problem.py's rows), so
after an edit, a `git pull` or a partial update a kernel could load the machine code of the code
before. It happened: a parallel sweep that inlines the serial sweep's contact update went on
running the update as it was before an edit of the serial sweep.

The fix is Numba's own hook (NUMBA_CACHE_LOCATOR_CLASSES, numba >= 0.62): Numba's locators,
each with a source stamp that also carries a digest of the contents of every project module the
kernel's file imports, directly or through others. A changed dependency changes the stamp, and
Numba discards the stale entries itself. Files outside the project keep Numba's stamp as it is.
"""
from __future__ import annotations

import hashlib
import re
import warnings
from functools import lru_cache
from pathlib import Path

import numba
from numba.core import caching

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("solver", "lab", "scenes")

# The packages whose modules count as dependencies: (root, names). install() may set another
# (the tests' throwaway package).
_scope: tuple[Path, tuple[str, ...]] = (ROOT, PACKAGES)

# `from X import names` (names in parentheses or continued by backslashes over lines) and
# `import X.Y, Z as W`. Extra matches (in a docstring, an alias) only add dependencies.
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+"
                   r"(\([^)]*\)|(?:[^\n]*\\\n)*[^\n]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+((?:[^\n]*\\\n)*[^\n]*)", re.M)


def _module_file(base: Path) -> Path | None:
    """The file of module or package `base` (a path without suffix), if it exists."""
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _package_inits(path: Path, root: Path) -> list[Path]:
    """The __init__.py of every package that holds `path`, up to the root (they run first)."""
    found = []
    folder = path.parent
    while folder != root and root in folder.parents:
        if (folder / "__init__.py").is_file():
            found.append(folder / "__init__.py")
        folder = folder.parent
    return found


@lru_cache(maxsize=None)
def imports_of(path: Path, root: Path, packages: tuple[str, ...]) -> frozenset[Path]:
    """The project files that `path` imports itself: relative imports, and absolute ones of the
    project's packages; a name imported from a package counts when it is a submodule."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found: set[Path] = set(_package_inits(path, root))
    for dots, dotted, names in _FROM.findall(text):
        if dots:
            base = path.parent
            for _ in range(len(dots) - 1):
                base = base.parent
        elif dotted.split(".")[0] in packages:
            base = root
        else:
            continue
        if dotted:
            base = base.joinpath(*dotted.split("."))
        module = _module_file(base)
        if module is not None:
            found.add(module)
        for name in re.findall(r"\w+", re.sub(r"#[^\n]*", "", names)):
            sub = _module_file(base / name)
            if sub is not None:
                found.add(sub)
    for listed in _IMPORT.findall(text):
        for dotted in re.findall(r"[\w.]+", re.sub(r"#[^\n]*|\bas[ \t]+\w+", "", listed)):
            parts = dotted.split(".")
            if parts[0] not in packages:
                continue
            for k in range(1, len(parts) + 1):
                module = _module_file(root.joinpath(*parts[:k]))
                if module is not None:
                    found.add(module)
    found.discard(path)
    return frozenset(found)


def dependencies(path: Path, root: Path | None = None,
                 packages: tuple[str, ...] | None = None) -> list[Path]:
    """Every project file `path` imports, directly or through others, sorted (itself not)."""
    root = _scope[0] if root is None else root
    packages = _scope[1] if packages is None else packages
    path = Path(path).resolve()
    seen = {path}
    todo = [path]
    while todo:
        for dep in imports_of(todo.pop(), root, packages):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    seen.discard(path)
    return sorted(seen)


@lru_cache(maxsize=None)
def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dependency_stamp(py_file: str) -> str | None:
    """A digest of the contents of every project file `py_file` depends on, or None when
    py_file is not a project file (Numba's stamp is then used alone)."""
    return _stamp(py_file, *_scope)


@lru_cache(maxsize=None)  # every kernel of a file asks: once per file and process
def _stamp(py_file: str, root: Path, packages: tuple[str, ...]) -> str | None:
    path = Path(py_file).resolve()
    try:
        relative = path.relative_to(root)
    except ValueError:
        return None
    if not relative.parts or relative.parts[0] not in packages:
        return None
    whole = hashlib.sha256()
    for dep in dependencies(path, root, packages):
        whole.update(str(dep.relative_to(root)).encode())
        whole.update(_digest(dep).encode())
    return whole.hexdigest()


class _DependentStamp:
    """A locator whose source stamp also changes with the files the kernel's file imports."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._dependency_file = py_file

    def get_source_stamp(self):
        own = super().get_source_stamp()
        extra = dependency_stamp(self._dependency_file)
        return own if extra is None else (own, extra)


class UserProvidedLocator(_DependentStamp, caching.UserProvidedCacheLocator):
    """Numba's NUMBA_CACHE_DIR locator with the dependency stamp."""


class InTreeLocator(_DependentStamp, caching.InTreeCacheLocator):
    """Numba's __pycache__ locator with the dependency stamp."""


class UserWideLocator(_DependentStamp, caching.UserWideCacheLocator):
    """Numba's per-user cache locator with the dependency stamp."""


# Numba's own order (caching.CacheImpl), each source-file locator replaced by ours.
LOCATORS = (f"{__name__}.UserProvidedLocator", f"{__name__}.InTreeLocator",
            f"{__name__}.UserWideLocator", "IPythonCacheLocator", "ZipCacheLocator")


def install(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> bool:
    """Make kernels decorated from now on use the dependency stamps (for files under
    root/packages); returns whether ours is in place. A locator list the user chose
    (NUMBA_CACHE_LOCATOR_CLASSES) is left as it is, with a warning: edits of imported modules
    may then leave stale kernels. Numba re-reads its settings from the environment when a
    NUMBA_* variable changes; our kernels are all decorated at import, before that could."""
    global _scope
    _scope = (Path(root).resolve(), tuple(packages))
    current = getattr(numba.config, "CACHE_LOCATOR_CLASSES", None)
    if current == "":
        numba.config.CACHE_LOCATOR_CLASSES = ",".join(LOCATORS)
        return True
    if current == ",".join(LOCATORS):
        return True
    why = ("this Numba has no NUMBA_CACHE_LOCATOR_CLASSES" if current is None
           else f"NUMBA_CACHE_LOCATOR_CLASSES={current!r} is set")
    warnings.warn(f"marbles: {why}; after an edit or update of solver/, delete its __pycache__ "
                  "folders, or cached kernels may run the code before", RuntimeWarning,
                  stacklevel=2)
    return False
