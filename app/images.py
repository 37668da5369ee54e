"""Images out of the window: a QImage encoded in the format a file name asks for, written
atomically like every output of the program (lab.io.files)."""
from __future__ import annotations

from pathlib import Path

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
from lab.io.files import OutputError, atomic_write

IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPG", ".jpeg": "JPG", ".bmp": "BMP"}


def image_bytes(image, path: str | Path) -> bytes | None:
    """A QImage encoded in the format `path`'s suffix names (PNG for any other), or None when
    Qt cannot encode it."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    ok = image.save(buffer, IMAGE_FORMATS.get(Path(path).suffix.lower(), "PNG"))
    buffer.close()
    return bytes(data.data()) if ok else None


def write_image(image, path: str | Path, make_folder: bool = False) -> Path:
    """`image` (a QImage) as the file `path`, atomically; with `make_folder` the folder is
    created first if missing. OutputError (one line naming the path) when it cannot be."""
    data = image_bytes(image, path)
    if data is None:
        raise OutputError(f"cannot write {path}: the image cannot be encoded")
    if make_folder:
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(f"cannot write {path}: {err.strerror}") from None
    return atomic_write(path, lambda f: f.write(data))
