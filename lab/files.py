"""Output files: checked before any work starts, and written atomically (a temporary name in the
destination folder, then a rename), so a reader or a crash never sees a half-written file."""
from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np


class OutputError(ValueError):
    """An output path that cannot be written; the message is one line naming the path."""


def check_writable(path: str | os.PathLike) -> Path:
    """Refuse, before any work starts, an output path that cannot be created."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise OutputError(f"output path {str(p)!r} is a directory")
    if not parent.is_dir():
        raise OutputError(f"output folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise OutputError(f"output path {str(p)!r} is not writable")
    return p


def prepare_out_dir(path: str | os.PathLike, names: tuple[str, ...]) -> Path:
    """Create output folder `path` if needed and refuse it, before any work, when it or one of
    the files `names` in it cannot be written."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutputError(f"output folder {str(path)!r} is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputError(f"output folder {str(path)!r} cannot be created ({err.strerror})"
                          ) from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {str(path)!r} is not writable")
    for name in names:
        check_writable(out / name)
    return out


def atomic_write(path: str | os.PathLike, write: Callable[[io.BufferedWriter], None]) -> Path:
    """Call write(file) on a temporary file beside `path`, then rename it to `path`."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return p


def json_safe(value):
    """JSON has no inf or NaN: they become null (a diverged residual reads as null)."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def write_json(path: str | os.PathLike, data: dict) -> Path:
    text = json.dumps(json_safe(data), indent=2, allow_nan=False, default=str) + "\n"
    return atomic_write(path, lambda f: f.write(text.encode()))


def write_npz(path: str | os.PathLike, **arrays) -> Path:
    return atomic_write(path, lambda f: np.savez(f, **arrays))
