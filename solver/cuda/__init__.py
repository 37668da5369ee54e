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
    from .backend import check_solver

    check_solver(solver)


def usable(solver: str) -> bool:
    """Whether the cuda device can run `solver` here."""
    try:
        check_device(solver)
    except ParamError:
        return False
    return True
