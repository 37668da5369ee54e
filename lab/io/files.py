"""Output files: checked before any work starts, and written atomically, so a reader or a crash
never sees a half-written file.

The rules every output follows (`marbles-bench`, the window's `B` and `P`, the report):

- **Checked first, for real.** `check_writable` creates and removes the very temporary file the
  write will use, in the folder the write will use, so whatever would refuse the write at the end
  (/proc, /sys, a read-only filesystem, a name over NAME_MAX, a missing folder; `os.access`
  says yes to root everywhere) refuses it before the run.
- **Atomic.** The data goes to `.mb-<pid>-<random>.tmp` beside the target (a short name that does
  not grow with the target's, so any name that fits NAME_MAX works), is fsynced, renamed over the
  target, and the folder is fsynced. Any OSError while writing (a full disk, EIO) becomes an
  `OutputError`: one line naming the path and the reason, and the temporary file is removed.
- **Permissions.** A file that is replaced keeps its permission bits (and, when allowed, its
  owner and group); a new file gets 0666 masked by the umask, as `open()` would give it (0644
  under the usual umask 022).
- **Symlinks.** A target that is a symlink is written through: the file the link points to is
  replaced and the link stays a link. An existing target that is not a regular file (a device,
  a FIFO, a socket, a link loop) is refused.
- **Leftovers.** A killed write leaves its temporary file behind; the next write into the same
  folder removes temporary files of ours (the exact name pattern) whose process is gone and that
  were last touched more than STALE_SECONDS ago (the age guards a live writer in another PID
  namespace sharing the folder).
- **Sets.** `write_group` writes several files that belong together (benchmark.npy, .png, .json)
  so that a reader never sees a new one beside an old one: the set's index file (the last one)
  is removed first, the others renamed into place, the index last. A kill leaves the old
  complete set, or a set without its index (recognisably incomplete), never a mixed one. A
  folder that did not exist is built under a temporary name and renamed whole.
"""
from __future__ import annotations

import errno
import io
import json
import os
import re
import secrets
import shutil
import stat
import time
import zipfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

TEMP_PREFIX = ".mb-"
TEMP_SUFFIX = ".tmp"
# .mb-<pid>-<6 hex>.tmp: at most 22 characters for a 7-digit pid.
TEMP_PATTERN = re.compile(r"^\.mb-([1-9][0-9]{0,9})-[0-9a-f]{6}\.tmp$")
STALE_SECONDS = 60.0  # a leftover temporary is removed only once untouched this long
PID_MAX = 1 << 22  # Linux's largest pid_max: a larger number is not a pid of ours

Writer = Callable[[io.BufferedWriter], None]


class OutputError(ValueError):
    """An output path that cannot be written; the message is one line naming the path."""


# ------------------------------------------------------------------------------- helpers

def temp_name() -> str:
    return f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(3)}{TEMP_SUFFIX}"


def _reason(err: OSError, folder: Path | None = None) -> str:
    """The cause of `err` in a few words; `folder`: where a file was being created."""
    if err.errno == errno.ENOENT:
        if folder is not None and _isdir(folder):
            return "the folder does not accept new files"  # /proc
        return "the folder does not exist"
    if err.errno == errno.ENAMETOOLONG:
        return "file name too long"
    return err.strerror or str(err)


def destination(path: str | os.PathLike) -> Path:
    """The file a write to `path` replaces: a symlink is followed to its target."""
    p = Path(path)
    try:
        link = stat.S_ISLNK(os.lstat(p).st_mode)
    except OSError:
        link = False  # nothing there yet (or a name the checks refuse)
    return Path(os.path.realpath(p)) if link else p


def _isdir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


def _folder(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def _create_temp(folder: Path, directory: bool = False) -> tuple[int | None, Path]:
    """A new temporary file (fd, path) or folder (None, path) in `folder`; OSError if the
    folder does not take one. Files are created 0666 and folders 0777, masked by the umask."""
    for _ in range(10):
        tmp = folder / temp_name()
        try:
            if directory:
                os.mkdir(tmp, 0o777)
                return None, tmp
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def fsync_folder(folder: Path) -> None:
    """Make renames in `folder` durable; filesystems that cannot fsync a folder are let be."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread of ours may be writing it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists (EPERM: someone else's)
    return True


def _stale_entry(entry: os.DirEntry, now: float) -> bool:
    match = TEMP_PATTERN.match(entry.name)
    if not match or int(match.group(1)) >= PID_MAX or _pid_alive(int(match.group(1))):
        return False
    try:
        touched = entry.stat(follow_symlinks=False).st_mtime
        if entry.is_dir(follow_symlinks=False):
            with os.scandir(entry.path) as inner:
                touched = max([touched] + [e.stat(follow_symlinks=False).st_mtime
                                           for e in inner])
    except OSError:
        return False
    return now - touched > STALE_SECONDS


def _remove_temp_folder(path: str) -> None:
    """A temporary folder of ours holds only regular files: anything else, and it stays."""
    with os.scandir(path) as inner:
        entries = list(inner)
    if all(e.is_file(follow_symlinks=False) for e in entries):
        for e in entries:
            os.unlink(e.path)
        os.rmdir(path)


def remove_stale_temps(folder: str | os.PathLike) -> int:
    """Remove the leftovers of killed writes in `folder` (see the module docstring); returns
    how many. Never raises: a leftover that cannot be removed is left for next time."""
    removed, now = 0, time.time()
    try:
        with os.scandir(folder) as it:
            stale = [e for e in it if _stale_entry(e, now)]
    except OSError:
        return 0
    for entry in stale:
        try:
            if entry.is_dir(follow_symlinks=False):
                _remove_temp_folder(entry.path)
            elif entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
            else:
                continue
            removed += 1
        except OSError:
            pass
    return removed


# -------------------------------------------------------------------------------- checks

def probe_folder(folder: str | os.PathLike, directory: bool = False) -> None:
    """Create and remove a temporary file (or folder) in `folder`: OSError if it takes none."""
    fd, tmp = _create_temp(Path(folder), directory)
    if fd is None:
        os.rmdir(tmp)
    else:
        os.close(fd)
        os.unlink(tmp)


def check_writable(path: str | os.PathLike) -> Path:
    """Refuse, before any work starts, an output path that cannot be written: OutputError with
    one line naming it. Creates nothing (the probe's temporary file is removed at once)."""
    if not os.fspath(path):
        raise OutputError("output path '' is empty")
    p = Path(path)
    shown = str(p)
    target = destination(p)
    if _isdir(target):
        raise OutputError(f"output path {shown!r} is a directory")
    parent = _folder(target)
    if not _isdir(parent):
        what = "is not a folder" if _exists(parent) else "does not exist"
        raise OutputError(f"output path {shown!r}: folder {str(parent)!r} {what}")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise OutputError(f"output path {shown!r} cannot be written ({_reason(err)})") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputError(f"output path {shown!r} is not a regular file")
    if st is not None and not os.access(target, os.W_OK):
        raise OutputError(f"output path {shown!r} is not writable (read-only file)")
    try:
        probe_folder(parent)
    except OSError as err:
        raise OutputError(f"output path {shown!r} cannot be written ({_reason(err, parent)})"
                          ) from None
    return p


def check_folder(path: str | os.PathLike, what: str = "output folder") -> Path:
    """Refuse, before any work, a folder that files will be written into later: it must be a
    folder that takes a new file or, if it does not exist yet (it is created when written),
    sit in one that takes a new folder. Creates nothing. `what` names it in messages."""
    out = Path(path)
    text = str(path)
    try:
        os.lstat(out)
    except FileNotFoundError:
        pass
    except OSError as err:  # a name too long, a link loop on the way, ...
        raise OutputError(f"{what} {text!r} cannot be written ({_reason(err)})") from None
    if _exists(out) and not _isdir(out):
        raise OutputError(f"{what} {text!r} is not a folder")
    probe, directory = (out, False) if _isdir(out) else (_folder(out), True)
    if not _isdir(probe):
        raise OutputError(f"{what} {text!r}: folder {str(probe)!r} does not exist")
    try:
        probe_folder(probe, directory)
    except OSError as err:
        raise OutputError(f"{what} {text!r} cannot be written ({_reason(err, probe)})") from None
    return out


def _missing_folders(out: Path) -> list[Path]:
    """`out` and its ancestors that do not exist yet, deepest first."""
    missing = []
    for folder in (out, *out.parents):
        if os.path.lexists(folder):
            break
        missing.append(folder)
    return missing


def prepare_out_dir(path: str | os.PathLike, names: tuple[str, ...]) -> Path:
    """Create output folder `path` if needed and refuse it, before any work, when it or one of
    the files `names` in it cannot be written; on refusal the folders it created are removed."""
    out = Path(path)
    if _exists(out) and not _isdir(out):
        raise OutputError(f"output folder {str(path)!r} is not a directory")
    created = _missing_folders(out)
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
            probe_folder(out)
        except OSError as err:
            raise OutputError(f"output folder {str(path)!r} cannot be created or written "
                              f"({_reason(err, _folder(out))})") from None
        for name in names:
            check_writable(out / name)
    except OutputError:
        _remove_folders(created)
        raise
    return out


def check_out_dir(path: str | os.PathLike, names: tuple[str, ...]) -> Path:
    """prepare_out_dir's checks, leaving no folder behind: folders that do not exist yet are
    created, probed and removed again, for a writer that builds its folder whole (write_group),
    so that a write that fails later leaves no empty folder."""
    created = _missing_folders(Path(path))
    out = prepare_out_dir(path, names)
    _remove_folders(created)
    return out


def _remove_folders(folders: list[Path]) -> None:
    """rmdir each of `folders` (deepest first); one that is not empty stays."""
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            pass


# -------------------------------------------------------------------------------- writes

def _keep_owner_and_mode(fd: int, st: os.stat_result) -> None:
    if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)  # before fchmod: chown clears set-id bits
        except OSError:
            pass
    os.fchmod(fd, stat.S_IMODE(st.st_mode))


def _write_temp(target: Path, write: Writer, shown: str, folder: Path | None = None) -> Path:
    """write(file) into a new fsynced temporary file in `folder` (default: beside `target`),
    carrying the permission bits of an existing `target`; returns its path. OSError ->
    OutputError naming `shown`; any failure removes the temporary file."""
    try:
        try:
            st = os.stat(target)
        except FileNotFoundError:
            st = None
        folder = folder or _folder(target)
        fd, tmp = _create_temp(folder)
    except OSError as err:
        raise OutputError(f"cannot write {shown}: {_reason(err, folder)}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            if st is not None:
                _keep_owner_and_mode(f.fileno(), st)
            os.fsync(f.fileno())
    except BaseException as err:
        _unlink(tmp)
        if isinstance(err, OSError):
            raise OutputError(f"cannot write {shown}: {_reason(err)}") from None
        raise
    return tmp


def atomic_write(path: str | os.PathLike, write: Writer) -> Path:
    """Call write(file) on a temporary file beside `path` (beside its target if it is a
    symlink), then rename it over the target. Returns `path`."""
    p = Path(path)
    target = destination(p)
    remove_stale_temps(_folder(target))
    tmp = _write_temp(target, write, str(p))
    try:
        os.replace(tmp, target)
        fsync_folder(_folder(target))
    except BaseException as err:
        _unlink(tmp)
        if isinstance(err, OSError):
            raise OutputError(f"cannot write {p}: {_reason(err)}") from None
        raise
    return p


def _replace_group(folder: Path, parts: Sequence[tuple[str, Writer]]) -> None:
    """write_group into an existing folder: every file staged beside its target, then the
    index removed, the others renamed into place, the index last."""
    targets = [destination(folder / name) for name, _ in parts]
    folders = list(dict.fromkeys(_folder(t) for t in targets))
    for f in folders:
        remove_stale_temps(f)
    staged: list[Path] = []
    try:
        for (name, write), target in zip(parts, targets):
            staged.append(_write_temp(target, write, str(folder / name)))
        _unlink(targets[-1])
        fsync_folder(_folder(targets[-1]))  # the old index is gone before a new file appears
        for k, target in enumerate(targets):
            os.replace(staged[k], target)
            staged[k] = None
        for f in folders:
            fsync_folder(f)
    except BaseException as err:
        for tmp in staged:
            if tmp is not None:
                _unlink(tmp)
        if isinstance(err, OSError):
            raise OutputError(f"cannot write into {folder}: {_reason(err)}") from None
        raise


def _create_group(folder: Path, parts: Sequence[tuple[str, Writer]]) -> bool:
    """write_group into a folder that does not exist: build it under a temporary name beside
    it and rename it whole. False when the folder appeared meanwhile (nothing written)."""
    parent = _folder(folder)
    created = _missing_folders(parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(parent)
        _, tmp = _create_temp(parent, directory=True)
    except OSError as err:
        _remove_folders(created)
        raise OutputError(f"cannot create {folder}: {_reason(err)}") from None
    try:
        for name, write in parts:
            final = tmp / name
            os.replace(_write_temp(final, write, str(folder / name), tmp), final)
        fsync_folder(tmp)
        os.rename(tmp, folder)
        fsync_folder(parent)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_folders(created)
        if isinstance(err, OSError):
            if err.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR) and _isdir(folder):
                return False
            raise OutputError(f"cannot create {folder}: {_reason(err)}") from None
        raise
    return True


def write_group(folder: str | os.PathLike, parts: Sequence[tuple[str, Writer]]) -> list[Path]:
    """Write the files `parts` ((name, write(file)) pairs) into `folder` as one unit; the last
    part is the set's index (a reader that finds it finds the others complete and from the same
    write). Returns their paths, in the order of `parts`."""
    out = Path(folder)
    if not parts:
        raise ValueError("write_group needs at least one file")
    if _exists(out) and not _isdir(out):
        raise OutputError(f"output folder {str(out)!r} is not a directory")
    if _isdir(out) or not _create_group(out, parts):
        _replace_group(out, parts)
    return [out / name for name, _ in parts]


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


def json_bytes(data: dict) -> bytes:
    return (json.dumps(json_safe(data), indent=2, allow_nan=False, default=str) + "\n").encode()


def write_json(path: str | os.PathLike, data: dict) -> Path:
    text = json_bytes(data)
    return atomic_write(path, lambda f: f.write(text))


# numpy's savez stamps each member with the clock; a fixed stamp makes the same arrays the same
# bytes (a collection written twice compares equal).
NPZ_STAMP = (1980, 1, 1, 0, 0, 0)


def _savez(f, arrays: dict) -> None:
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(zipfile.ZipInfo(f"{name}.npy", NPZ_STAMP), "w",
                              force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def write_npz(path: str | os.PathLike, **arrays) -> Path:
    """An .npz numpy's `np.load` reads, written atomically; the same arrays, the same bytes."""
    return atomic_write(path, lambda f: _savez(f, arrays))
