"""The cuda backend: the whole step on the GPU (solver/cuda/backend.py). Imported only when a
step asks for it; numba-cuda is an optional extra (`pip install -e '.[cuda]'`)."""
from __future__ import annotations

from ..params import ParamError


def check_device(solver: str) -> None:
    """ParamError (one line) when the cuda device cannot run here, or cannot run `solver`."""
    from .runtime import unavailable

    why = unavailable()
    if why:
        raise ParamError(f"--device cuda: {why}")
    check_solver(solver)


def check_solver(name: str) -> None:
    """ParamError (one line) when solver `name`'s Method does not declare the cuda device."""
    from ..methods import registry

    if "cuda" not in registry.get(name).devices:
        raise ParamError(f"solver {name} does not run on the cuda device; there use one of "
                         f"{', '.join(registry.on_device('cuda'))}, or --device cpu")


def usable(solver: str) -> bool:
    """Whether the cuda device can run `solver` here."""
    try:
        check_device(solver)
    except ParamError:
        return False
    return True
