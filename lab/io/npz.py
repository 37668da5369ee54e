"""Strict reading of the .npz snapshots: one member at a time, only the members asked for, and
each member's npy header checked (dtype, shape, declared size against the bytes the member
holds) before a byte of its array is allocated. Nothing is unpickled. Every refusal is a
ValueError with a one-line message naming the file.

`np.load` would read whatever a header declares (a lying header asks for terabytes), hand out
object arrays for pickle to rebuild if allowed, and give a traceback for an empty or truncated
file; the checks here run first.
"""
from __future__ import annotations

import math
import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

# A member larger than this (uncompressed) is refused before reading: 1 GiB is 45 million
# marbles' positions, far past what a run here can step.
MAX_MEMBER_BYTES = 1 << 30
MAX_MEMBERS = 1000  # a snapshot has about fifteen
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; an empty archive
REAL = "iuf"  # dtype kinds of real numbers: no bool, complex, object, text or records
# What a damaged archive raises from zipfile, zlib or numpy's header parser.
_LOW_LEVEL = (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError,
              RuntimeError, struct.error, OverflowError, SyntaxError, TypeError)


class ArchiveError(ValueError):
    """A refused archive or member; the message is one line and names the file."""


def one_line(text: object) -> str:
    return " ".join(str(text).split())


class Archive:
    """An .npz file opened for strict reading; `what` names it in messages ("state snapshot").
    Dimension names in expected shapes ("n", "m") are bound by the first member that has them,
    so every later member must agree."""

    def __init__(self, path: str | os.PathLike, what: str):
        self.path = Path(path)
        self.what = what
        self.dims: dict[str, int] = {}
        self._check_file()
        try:
            self._zip = zipfile.ZipFile(self.path)
            infos = self._zip.infolist()
        except _LOW_LEVEL + (ValueError,) as err:
            raise self.error(f"a damaged zip archive ({one_line(err)})") from None
        if len(infos) > MAX_MEMBERS:
            self._zip.close()
            raise self.error(f"{len(infos)} members (at most {MAX_MEMBERS})")
        self._members = {i.filename[:-4]: i for i in infos if i.filename.endswith(".npy")}

    def error(self, message: str) -> ArchiveError:
        return ArchiveError(f"{self.path}: not a usable {self.what}: {one_line(message)}")

    def _check_file(self) -> None:
        """Refuse what is not a regular file starting like a zip archive, before zipfile sees
        it (an empty file, a bare .npy, a folder, a pipe that would block)."""
        p = self.path
        try:
            mode = os.stat(p).st_mode
            if stat.S_ISREG(mode):
                with open(p, "rb") as f:
                    head = f.read(8)
        except FileNotFoundError:
            raise ArchiveError(f"{p}: no such {self.what} file") from None
        except (OSError, ValueError) as err:
            raise ArchiveError(f"{p}: cannot read the {self.what} "
                               f"({one_line(getattr(err, 'strerror', None) or err)})") from None
        if stat.S_ISDIR(mode):
            raise ArchiveError(f"{p}: a folder, not an .npz file ({self.what})")
        if not stat.S_ISREG(mode):
            raise ArchiveError(f"{p}: not a regular file, so not an .npz file ({self.what})")
        if not head:
            raise self.error("the file is empty")
        if head.startswith(npy.MAGIC_PREFIX):
            raise self.error("a single .npy array, not an .npz archive")
        if head[:4] not in ZIP_MAGIC:
            raise self.error("not an .npz (zip) archive")

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()

    @property
    def names(self) -> set[str]:
        """The arrays the archive holds (member names without .npy)."""
        return set(self._members)

    def __contains__(self, key: str) -> bool:
        return key in self._members

    def array(self, key: str, shape: tuple, kinds: str = REAL) -> np.ndarray:
        """Member `key` after its header is checked: dtype kind in `kinds`; `shape` a tuple of
        ints, dimension names ("n", bound on first use) and None (any length). The array is
        read-only: convert it."""
        dtype, got, fortran, data = self._read(
            key, lambda dtype, got: self._check(key, dtype, got, shape, kinds))
        return np.frombuffer(data, dtype=dtype, count=math.prod(got)).reshape(
            got, order="F" if fortran else "C")

    def text(self, key: str, max_chars: int) -> str:
        """Member `key` as a 0-d unicode string of at most `max_chars` characters."""
        def check(dtype, got):
            if dtype.kind != "U" or got != ():
                raise self.error(f"{key} must be a text scalar, got {dtype} {got}")
            if dtype.itemsize // 4 > max_chars:
                raise self.error(f"{key} is {dtype.itemsize // 4} characters long (at most "
                                 f"{max_chars})")
        dtype, _, _, data = self._read(key, check)
        try:
            text = data.decode("utf-32-be" if dtype.byteorder == ">" else "utf-32-le")
        except UnicodeDecodeError:
            raise self.error(f"{key} holds characters that are not text") from None
        return text.rstrip("\0")  # numpy pads short strings with NULs

    def _check(self, key: str, dtype: np.dtype, got: tuple, shape: tuple, kinds: str) -> None:
        if dtype.hasobject or dtype.kind not in kinds:
            wanted = {REAL: "real numbers", "iu": "integers"}.get(kinds, f"dtype kind {kinds}")
            raise self.error(f"{key} must hold {wanted}, got dtype {dtype}")
        dims = dict(self.dims)
        fits = len(got) == len(shape) and all(
            d is None or (dims.setdefault(d, g) == g if isinstance(d, str) else d == g)
            for d, g in zip(shape, got))
        if not fits:
            bound = "".join(f", {d} = {self.dims[d]}" for d in dict.fromkeys(shape)
                            if d in self.dims)
            text = ", ".join("k" if d is None else str(d) for d in shape)
            raise self.error(f"{key} has shape {got}, expected "
                             f"({text}{',' if len(shape) == 1 else ''}){bound}")
        self.dims = dims

    def _read(self, key: str, check) -> tuple[np.dtype, tuple, bool, bytes]:
        """(dtype, shape, Fortran order, raw bytes) of member `key`; check(dtype, shape) runs
        on the header before the data is read."""
        info = self._members.get(key)
        if info is None:
            raise self.error(f"missing {key}")
        if info.flag_bits & 0x1:
            raise self.error(f"{key} is encrypted")
        if info.file_size > MAX_MEMBER_BYTES:
            raise self.error(f"{key} is {info.file_size} bytes (at most {MAX_MEMBER_BYTES})")
        try:
            with self._zip.open(info) as f:
                dtype, shape, fortran = self._header(key, f)
                check(dtype, shape)
                nbytes = math.prod(shape) * dtype.itemsize
                holds = info.file_size - f.tell()
                if nbytes != holds:
                    raise self.error(f"{key}'s header declares {shape} {dtype} ({nbytes} bytes) "
                                     f"but the member holds {holds} bytes")
                data = f.read(nbytes)
                if len(data) != nbytes or f.read(1):  # the last read checks the CRC
                    raise self.error(f"{key} is truncated")
        except ArchiveError:
            raise
        except _LOW_LEVEL + (ValueError,) as err:
            raise self.error(f"{key} cannot be read ({one_line(err)})") from None
        return dtype, shape, fortran, data

    def _header(self, key: str, f) -> tuple[np.dtype, tuple, bool]:
        version = npy.read_magic(f)
        if version not in ((1, 0), (2, 0)):
            raise self.error(f"{key} has npy format version {version} (1.0 and 2.0 are read)")
        read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        try:
            shape, fortran, dtype = read(f)
        except Exception as err:  # noqa: BLE001 - numpy parses untrusted text with ast and
            # tokenize, whose errors (TokenError, SyntaxError, ...) name no common base class
            raise self.error(f"{key} has an unreadable npy header ({one_line(err)})") from None
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise self.error(f"{key} declares the shape {shape}")
        return dtype, tuple(shape), bool(fortran)
