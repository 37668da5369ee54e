"""Builders of .npz files, good and malformed, for the snapshot-reading tests: valid state and
LCP snapshots of the column as dicts of arrays, archives written member by member (so a header
can lie), and the corpus of bad input files of tests/lab/cli/test_corpus_files.py."""
from __future__ import annotations

import io
import json
import os
import pathlib
import tempfile
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from numpy.lib import format as npy

import scenes
from solver.params import resolve
from lab.io import snapshot
from solver.methods import registry
from solver.step import Simulation

NAN, INF = float("nan"), float("inf")


# ------------------------------------------------------------------------------ valid arrays

@lru_cache(maxsize=1)
def _column() -> tuple[dict, dict]:
    sim = Simulation(scenes.build("column"), registry.settings("pgs", 20), warm_start=1.0)
    for _ in range(2):
        sim.step()
    with tempfile.TemporaryDirectory() as tmp:
        state = snapshot.save_state(pathlib.Path(tmp) / "state.npz", sim.world, sim.impulses(),
                                    {"name": "column",
                                     "params": resolve(scenes.get("column").params, {}, "")})
        lcp = snapshot.save_lcp(pathlib.Path(tmp) / "lcp.npz", sim.problem, sim.lam, sim.world)
        with np.load(state, allow_pickle=False) as s, np.load(lcp, allow_pickle=False) as c:
            return {k: s[k] for k in s.files}, {k: c[k] for k in c.files}


@lru_cache(maxsize=1)
def _frictional_column() -> dict:
    world = scenes.build("column", {"mu": 0.5, "mu_roll": 0.001})
    world.v[:, 0] = 0.05  # sliding against the tube and each other: tangent rows matter
    sim = Simulation(world, registry.settings("pgs", 20), warm_start=1.0)
    for _ in range(2):
        sim.step()
    with tempfile.TemporaryDirectory() as tmp:
        lcp = snapshot.save_lcp(pathlib.Path(tmp) / "lcp.npz", sim.problem, sim.lam, sim.world)
        with np.load(lcp, allow_pickle=False) as c:
            return {k: c[k] for k in c.files}


def frictional_lcp_arrays() -> dict:
    """The members of a valid frictional LCP snapshot (rows = 6) of a sliding column."""
    return {k: np.array(v) for k, v in _frictional_column().items()}


def state_arrays() -> dict:
    """The members of a valid state snapshot of the settled column (7 marbles, 7 contacts,
    with impulses and the scene): a fresh dict of copies."""
    return {k: np.array(v) for k, v in _column()[0].items()}


def lcp_arrays() -> dict:
    """The members of a valid LCP snapshot of the same column."""
    return {k: np.array(v) for k, v in _column()[1].items()}


# ----------------------------------------------------------------------- archives, raw members

def npy_bytes(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    f = io.BytesIO()
    npy.write_array(f, np.asanyarray(array), allow_pickle=allow_pickle)
    return f.getvalue()


def raw_npy(descr: object, shape, data: bytes = b"", fortran: bool = False,
            version: tuple = (1, 0)) -> bytes:
    """An npy member whose header says whatever it is told, followed by `data`."""
    header = repr({"descr": descr, "fortran_order": fortran, "shape": shape}).encode("latin1")
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    size = len(header).to_bytes(2 if version == (1, 0) else 4, "little")
    return npy.MAGIC_PREFIX + bytes(version) + size + header + data


def write_members(path: pathlib.Path, members: dict, compress: bool = False,
                  encrypted: tuple = ()) -> pathlib.Path:
    """An archive of `members` (name -> bytes, or an array saved as name.npy)."""
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as z:
        for name, value in members.items():
            data = value if isinstance(value, bytes) else npy_bytes(value)
            info = zipfile.ZipInfo(name if isinstance(value, bytes) and "." in name
                                   else f"{name}.npy")
            info.compress_type = method
            z.writestr(info, data)
    for name in encrypted:
        _mark_encrypted(path, f"{name}.npy")
    return path


def _mark_encrypted(path: pathlib.Path, member: str) -> None:
    """Set the 'encrypted' flag of `member` in its local and central headers (zipfile clears
    it when writing)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        local = z.getinfo(member).header_offset
    data[local + 6] |= 0x1
    central = data.index(b"PK\x01\x02")
    while data[central + 46:central + 46 + len(member)] != member.encode():
        central = data.index(b"PK\x01\x02", central + 4)
    data[central + 8] |= 0x1
    path.write_bytes(bytes(data))


def write_arrays(path: pathlib.Path, arrays: dict, raw: dict | None = None) -> pathlib.Path:
    """arrays saved as members, with `raw` members (name -> npy bytes) replacing some."""
    members = {k: npy_bytes(v) for k, v in arrays.items()}
    members.update(raw or {})
    return write_members(path, members)


class Detonator:
    """Unpickling it creates the file it names: proof that an object array was unpickled."""

    def __init__(self, marker: pathlib.Path):
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (self.marker,))


def object_member(marker: pathlib.Path) -> bytes:
    return npy_bytes(np.array([Detonator(marker)] * 3, dtype=object), allow_pickle=True)


# ------------------------------------------------------------------------------------- corpus

@dataclass(frozen=True)
class Case:
    """A malformed input file: `kind` "state" (run --state), "compare" (compare --state) or
    "lcp" (solve --lcp); build(folder) writes it and returns its path."""

    name: str
    kind: str
    build: Callable[[pathlib.Path], pathlib.Path]

    def argv(self, path: pathlib.Path, out: pathlib.Path) -> list[str]:
        if self.kind == "lcp":
            return ["solve", "--lcp", str(path), "--iterations", "3"]
        if self.kind == "compare":
            return ["compare", "--state", str(path), "--settle", "1", "--iterations", "3",
                    "--solvers", "pgs", "--quiet", "--out", str(out)]
        return ["run", "--state", str(path), "--steps", "1", "--quiet"]


def _file(content: bytes, suffix: str = ".npz"):
    def build(d):
        path = d / f"f{suffix}"
        path.write_bytes(content)
        return path
    return build


def _edited(kind: str, edit: Callable[[dict], dict], raw=None):
    """A snapshot of `kind` whose arrays `edit` changed; raw(d) -> {name: npy bytes} adds or
    replaces members with hand-made ones."""
    def build(d):
        arrays = edit({"lcp": lcp_arrays, "friction": frictional_lcp_arrays}.get(
            kind, state_arrays)())
        return write_arrays(d / "f.npz", arrays, raw(d) if raw else None)
    return build


def _set(**changes):
    return lambda a: {**a, **changes}


def _drop(*names):
    return lambda a: {k: v for k, v in a.items() if k not in names}


def _with(key, change):
    """Set a[key] to change(a[key])."""
    return lambda a: {**a, key: change(a[key])}


def _json(key, value):
    text = value if isinstance(value, str) else json.dumps(value)
    return _set(**{key: np.array(text)})


def _valid_file(kind: str, mangle: Callable[[bytes], bytes]):
    """A valid snapshot written by the program whose bytes `mangle` changed."""
    def build(d):
        arrays = state_arrays() if kind != "lcp" else lcp_arrays()
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        path = d / "f.npz"
        path.write_bytes(mangle(buffer.getvalue()))
        return path
    return build


def _read_member(kind: str) -> bytes:
    """The local header name of a member the loader must read (an LCP's x is never read)."""
    return b"x.npy" if kind != "lcp" else b"gap.npy"


def _flip_in_data(kind: str):
    """One byte of a member's array data changed: the archive's CRC no longer matches."""
    def mangle(data: bytes) -> bytes:
        at = data.index(_read_member(kind)) + 200
        return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]
    return mangle


def _compressed_and_damaged(kind: str):
    def build(d):
        arrays = state_arrays() if kind != "lcp" else lcp_arrays()
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        data = bytearray(buffer.getvalue())
        at = data.index(_read_member(kind)) + 40
        data[at:at + 16] = b"\xff" * 16
        (d / "f.npz").write_bytes(bytes(data))
        return d / "f.npz"
    return build


def _not_npy(kind: str):
    return lambda d: {_read_member(kind).decode()[:-4]: b"hello, not an npy array"}


def _encrypted(kind: str):
    def build(d):
        arrays = state_arrays() if kind != "lcp" else lcp_arrays()
        return write_members(d / "f.npz", arrays,
                             encrypted=(_read_member(kind).decode()[:-4],))
    return build


def _folder(d):
    (d / "folder.npz").mkdir()
    return d / "folder.npz"


def _fifo(d):
    os.mkfifo(d / "pipe.npz")  # opening it to read would block: it must not be opened
    return d / "pipe.npz"


def _symlink_loop(d):
    os.symlink(d / "b.npz", d / "a.npz")
    os.symlink(d / "a.npz", d / "b.npz")
    return d / "a.npz"


def _dangling(d):
    os.symlink(d / "gone.npz", d / "link.npz")
    return d / "link.npz"


def _many_members(d):
    return write_members(d / "f.npz", {f"m{k}": b"" for k in range(1200)})


def _object(key):
    return lambda d: {key: object_member(d / "UNPICKLED")}


def _lying(key, descr, shape, data=b"\0" * 64, **kw):
    return lambda d: {key: raw_npy(descr, shape, data, **kw)}


def _utf32(key, data: bytes):
    return lambda d: {key: raw_npy("<U1", (), data)}


def file_cases(kind: str) -> list[Case]:
    """What is not an archive of arrays at all."""
    return [Case(f"{kind}: {name}", kind, build) for name, build in [
        ("empty file", _file(b"")),
        ("text", _file(b"x = [1, 2, 3]\n")),
        ("bare .npy", _file(npy_bytes(np.zeros(3)), ".npy")),
        ("bare .npy named .npz", _file(npy_bytes(np.zeros((7, 3))))),
        ("zip magic then garbage", _file(b"PK\x03\x04" + b"\x00" * 40)),
        ("empty zip archive", lambda d: write_members(d / "f.npz", {})),
        ("zip of a text file", lambda d: write_members(d / "f.npz", {"a.txt": b"hello"})),
        ("a member that is not npy", _edited(kind, lambda a: a, _not_npy(kind))),
        ("truncated archive", _valid_file(kind, lambda b: b[: len(b) // 2])),
        ("archive cut in its last bytes", _valid_file(kind, lambda b: b[:-10])),
        ("CRC mismatch", _valid_file(kind, _flip_in_data(kind))),
        ("damaged deflate stream", _compressed_and_damaged(kind)),
        ("encrypted member", _encrypted(kind)),
        ("1200 members", _many_members),
        ("a folder", _folder),
        ("no such file", lambda d: d / "absent.npz"),
        ("a named pipe", _fifo),
        ("a symlink loop", _symlink_loop),
        ("a dangling symlink", _dangling),
    ]]


def header_cases(kind: str, key: str, shape: tuple) -> list[Case]:
    """Members whose npy header is malformed, lies or declares what cannot be allocated."""
    n = shape[0]
    return [Case(f"{kind}: {key} {name}", kind, _edited(kind, lambda a: a, raw)) for name, raw in [
        ("declares 3e10 elements", _lying(key, "<f8", (30_000_000_000,))),
        ("declares (14000, 14000)", _lying(key, "<f8", (14000, 14000))),
        ("declares fewer bytes than it holds", _lying(key, "<f8", shape, b"\0" * (8 * n * 9))),
        ("declares a negative length", _lying(key, "<f8", (-n, 3))),
        ("declares a float length", _lying(key, "<f8", (7.0, 3))),
        ("has a header that is not a dict", lambda d: {key: npy.MAGIC_PREFIX + b"\x01\x00"
                                                       + b"\x10\x00" + b"[1, 2, 3]      \n"}),
        ("has a header that is not Python", lambda d: {key: npy.MAGIC_PREFIX + b"\x01\x00"
                                                       + b"\x10\x00" + b"{'descr': <f8  \n"}),
        ("has npy version 9.0", _lying(key, "<f8", shape, version=(9, 0))),
        ("has an unknown dtype", _lying(key, "<q9", shape)),
        ("holds pickled objects", _object(key)),
        ("is a record array", _lying(key, [("a", "<f8")], shape, b"\0" * 8 * n)),
        ("is empty bytes", lambda d: {key: b""}),
        ("is cut inside its header", lambda d: {key: npy_bytes(np.zeros(shape))[:20]}),
        ("is cut inside its data", lambda d: {key: npy_bytes(np.zeros(shape))[:-8]}),
    ]]


def _complex(a):
    return a.astype(np.complex128)


def value_cases() -> list[Case]:
    """State snapshots whose arrays hold the wrong kind of value, shape or number."""
    cases = []
    for key in ("x", "v", "radius", "mass", "gravity", "dt", "time", "damping", "colour"):
        cases += [(f"{key} complex", _with(key, _complex)),
                  (f"{key} bool", _with(key, lambda a: a != 0)),
                  (f"{key} text", _with(key, lambda a: a.astype(str))),
                  (f"{key} datetime", _with(key, lambda a: np.zeros(a.shape, "M8[s]")))]
    for key in ("x", "v", "radius", "gravity", "dt", "time", "damping", "colour"):
        for bad in (NAN, INF, -INF):
            cases.append((f"{key} holds {bad}", _with(key, lambda a, b=bad: _poison(a, b))))
    cases += [
        ("missing " + key, _drop(key)) for key in snapshot.STATE_KEYS
    ] + [
        ("x of shape (7, 2)", _with("x", lambda a: a[:, :2])),
        ("x flat", _with("x", lambda a: a.ravel())),
        ("x 0-d", _set(x=np.float64(1.0))),
        ("x (7, 3, 1)", _with("x", lambda a: a[..., None])),
        ("v one marble short", _with("v", lambda a: a[:-1])),
        ("radius one marble long", _with("radius", lambda a: np.append(a, a[0]))),
        ("radius a scalar", _set(radius=np.float64(0.1))),
        ("mass (7, 1)", _with("mass", lambda a: a[:, None])),
        ("gravity (2,)", _set(gravity=np.zeros(2))),
        ("gravity a scalar", _set(gravity=np.float64(-9.81))),
        ("dt stored as a vector", _set(dt=np.array([0.02]))),
        ("time stored as (1, 1)", _set(time=np.zeros((1, 1)))),
        ("damping stored as a vector", _set(damping=np.array([0.1]))),
        ("colour (7, 4)", _set(colour=np.zeros((7, 4)))),
        ("colour above 1", _with("colour", lambda a: a * 2)),
        ("colour negative", _with("colour", lambda a: a - 1)),
        ("radius 0", _with("radius", lambda a: a * 0)),
        ("radius negative", _with("radius", lambda a: -a)),
        ("one radius 0", _with("radius", lambda a: np.where(np.arange(7) == 3, 0.0, a))),
        ("mass 0", _with("mass", lambda a: a * 0)),
        ("mass negative", _with("mass", lambda a: -a)),
        ("mass nan", _with("mass", lambda a: _poison(a, NAN))),
        ("mass -inf", _with("mass", lambda a: _poison(a, -INF))),
        ("mass subnormal (1/mass overflows)", _with("mass", lambda a: _poison(a, 1e-320))),
        ("dt 0", _set(dt=np.float64(0.0))),
        ("dt negative", _set(dt=np.float64(-0.02))),
        ("dt 2 s", _set(dt=np.float64(2.0))),
        ("damping negative", _set(damping=np.float64(-5.0))),
        ("x 1e400 as longdouble", _with("x", lambda a: _poison(a.astype(np.longdouble),
                                                               np.longdouble("1e400")))),
    ]
    return [Case(f"state: {name}", "state", _edited("state", edit)) for name, edit in cases]


def _poison(a: np.ndarray, value) -> np.ndarray:
    a = np.array(a)
    a.reshape(-1)[min(3, a.size - 1)] = value
    return a


def json_cases() -> list[Case]:
    """Container (and scene) JSON that is not the schema."""
    box = {"kind": "box", "center": [0, 0], "half_width": 1.0, "floor": 0.0}
    containers = [
        ("null", "null"), ("a list", "[]"), ("a number", "3"), ("a string", '"tube"'),
        ("not JSON", "tube, please"), ("truncated", '{"kind": "floor", "height": 0'),
        ("empty", ""), ("NaN", '{"kind": "floor", "height": NaN}'),
        ("Infinity", '{"kind": "floor", "height": -Infinity}'),
        ("1e999", '{"kind": "floor", "height": 1e999}'),
        ("null inside", {"kind": "floor", "height": None}),
        ("null kind", {"kind": None, "height": 0}),
        ("no kind", {"height": 0}),
        ("unknown kind", {"kind": "cone", "height": 0}),
        ("kind in capitals", {"kind": "FLOOR", "height": 0}),
        ("missing key", {"kind": "tube", "center": [0, 0], "radius": 0.1}),
        ("unknown key", {**box, "wall": 3}),
        ("bool number", {"kind": "floor", "height": False}),
        ("string number", {"kind": "floor", "height": "0.0"}),
        ("planar not a bool", {**box, "planar": "yes"}),
        ("planar 1", {**box, "planar": 1}),
        ("centre too short", {**box, "center": [0]}),
        ("centre holds null", {**box, "center": [0, None]}),
        ("centre a dict", {**box, "center": {"x": 0, "y": 0}}),
        ("half_width 0", {**box, "half_width": 0}),
        ("sphere radius negative", {"kind": "sphere", "center": [0, 0, 1], "radius": -1}),
        ("height negative", {**box, "height": -1}),
        ("nested 100000 deep", "[" * 100_000 + "]" * 100_000),
        ("nested 30000 deep (within the size limit)", "[" * 30_000 + "]" * 30_000),
        ("nested 30000 deep, unclosed", '{"kind": ' + "[" * 30_000),
        ("nested 9 deep", {**box, "extra": [[[[[[[[0]]]]]]]]}),
        ("70 000 characters", {**box, "note": "x" * 70_000}),
        ("duplicate kinds as a list", [box, box]),
    ]
    cases = [(f"container {name}", _json("container", value)) for name, value in containers]
    cases += [
        ("container stored as a number", _set(container=np.float64(1.0))),
        ("container stored as bytes", _set(container=np.array(b'{"kind": "floor"}'))),
        ("container stored as a list of strings", _set(container=np.array(['{"kind":']))),
    ]
    scenes_bad = [
        ("scene unknown", {"name": "volcano", "params": {}}),
        ("scene params not a dict", {"name": "column", "params": [7]}),
        ("scene param out of range", {"name": "column", "params": {"n": -5}}),
        ("scene param unknown", {"name": "column", "params": {"colour": 1}}),
        ("scene param null", {"name": "column", "params": {"n": None}}),
        ("scene name a number", {"name": 3, "params": {}}),
        ("scene name a list", {"name": ["column"], "params": {}}),
        ("scene param a dict", {"name": "column", "params": {"n": {"value": 7}}}),
        ("scene without params", {"name": "column"}),
        ("scene not JSON", "column"),
    ]
    cases += [(name, _json("scene", value)) for name, value in scenes_bad]
    return [Case(f"state: {name}", "state", _edited("state", edit)) for name, edit in cases] + [
        Case("state: container with an invalid code point", "state",
             _edited("state", lambda a: a, _utf32("container", b"\xff\xff\xff\x7f"))),
        Case("state: container with a lone surrogate", "state",
             _edited("state", lambda a: a, _utf32("container", b"\x00\xd8\x00\x00"))),
        Case("state: container text that declares 10^9 characters", "state",
             _edited("state", lambda a: a, _lying("container", "<U1000000000", ()))),
        Case("state: container text that declares 10^7 characters", "state",
             _edited("state", lambda a: a, _lying("container", "<U10000000", ()))),
        Case("state: scene text that declares 10^7 characters", "state",
             _edited("state", lambda a: a, _lying("scene", "<U10000000", ()))),
    ]


def impulse_cases() -> list[Case]:
    """The stored warm-start impulses: both or neither, fitting the world."""
    return [Case(f"state: {name}", "state", _edited("state", edit)) for name, edit in [
        ("contact_key without contact_impulse", _drop("contact_impulse")),
        ("contact_impulse without contact_key", _drop("contact_key")),
        ("contact_key float", _with("contact_key", lambda a: a.astype(float))),
        ("contact_key bool", _with("contact_key", lambda a: a > 0)),
        ("contact_key negative", _with("contact_key", lambda a: -a - 1)),
        ("contact_key beyond every pair", _with("contact_key", lambda a: a + 10**6)),
        ("contact_key twice", _with("contact_key", lambda a: np.full_like(a, a[0]))),
        ("contact_key uint64 huge", _with("contact_key",
                                          lambda a: a.astype(np.uint64) + np.uint64(2**63))),
        ("contact_key (k, 1)", _with("contact_key", lambda a: a[:, None])),
        ("contact lengths differ", _with("contact_impulse", lambda a: a[:-1])),
        ("contact_impulse nan", _with("contact_impulse", lambda a: _poison(a, NAN))),
        ("contact_impulse inf", _with("contact_impulse", lambda a: _poison(a, INF))),
        ("contact_impulse negative", _with("contact_impulse", lambda a: -a)),
        ("contact_impulse complex", _with("contact_impulse", _complex)),
    ]]


def lcp_cases() -> list[Case]:
    """LCP snapshots for `solve --lcp`."""
    cases = [
        ("W and q only", lambda a: {"W": a["W"], "q": a["q"]}),
        ("mu without the frictional geometry", _set(mu=np.full(7, 0.5))),
        *[(f"missing {k}", _drop(k)) for k in ("pairs", "normal", "gap", "v_pred", "dt")],
        ("missing mass and inv_mass", _drop("mass", "inv_mass")),
        ("pairs float", _with("pairs", lambda a: a.astype(float))),
        ("pairs (m, 3)", _with("pairs", lambda a: np.hstack([a, a[:, :1]]))),
        ("pairs beyond the marbles", _with("pairs", lambda a: a + 100)),
        ("pairs below -1", _with("pairs", lambda a: a - 5)),
        ("pairs joining a marble to itself", _with("pairs", lambda a: _self_pair(a))),
        ("pairs uint64 huge", _with("pairs", lambda a: np.abs(a).astype(np.uint64)
                                    + np.uint64(2**63))),
        ("normal nan", _with("normal", lambda a: _poison(a, NAN))),
        ("normal complex", _with("normal", _complex)),
        ("normal one row short", _with("normal", lambda a: a[:-1])),
        ("gap inf", _with("gap", lambda a: _poison(a, INF))),
        ("gap bool", _with("gap", lambda a: a > 0)),
        ("v_pred (n, 2)", _with("v_pred", lambda a: a[:, :2])),
        ("dt 0", _set(dt=np.float64(0.0))),
        ("dt nan", _set(dt=np.float64(NAN))),
        ("dt a vector", _set(dt=np.array([0.02]))),
        ("mass 0", _with("mass", lambda a: _poison(a, 0.0))),
        ("mass nan", _with("mass", lambda a: _poison(a, NAN))),
        ("mass negative", _with("mass", lambda a: -a)),
        ("mass subnormal", _with("mass", lambda a: _poison(a, 1e-320))),
        ("mass 0, no inv_mass", lambda a: _drop("inv_mass")(_with("mass",
                                                               lambda m: m * 0)(a))),
        ("inv_mass negative", _with("inv_mass", lambda a: -a)),
        ("inv_mass nan", _with("inv_mass", lambda a: _poison(a, NAN))),
        ("inv_mass inf", _with("inv_mass", lambda a: _poison(a, INF))),
        ("mass and inv_mass disagree", _with("inv_mass", lambda a: 2 * a)),
        ("q does not match", _with("q", lambda a: a + 1)),
        ("q inf", _with("q", lambda a: _poison(a, INF))),
        ("q nan", _with("q", lambda a: _poison(a, NAN))),
        ("q complex", _with("q", _complex)),
        ("q one short", _with("q", lambda a: a[:-1])),
    ]
    out = [Case(f"lcp: {name}", "lcp", _edited("lcp", edit)) for name, edit in cases]
    out += [Case(f"lcp: {name}", "lcp", _edited("lcp", lambda a: a, raw)) for name, raw in [
        ("lam holds pickled objects", _object("lam")),
        ("gap declares 3e10 elements", _lying("gap", "<f8", (30_000_000_000,))),
        ("pairs declares (14000, 14000)", _lying("pairs", "<i8", (14000, 14000))),
    ]]
    return out


def frictional_lcp_cases() -> list[Case]:
    """Frictional LCP snapshots (rows = 6, with mu, tangents, radius, w_pred) for `solve`."""
    cases = [
        ("mu negative", _with("mu", lambda a: -a)),
        ("mu nan", _with("mu", lambda a: _poison(a, NAN))),
        ("mu one short", _with("mu", lambda a: a[:-1])),
        ("mu_roll negative", _with("mu_roll", lambda a: -a - 1)),
        ("rows 4", _set(rows=np.int64(4))),
        ("rows 3 with rolling resistance", _set(rows=np.int64(3))),
        ("radius 0", _with("radius", lambda a: _poison(a, 0.0))),
        ("w_pred nan", _with("w_pred", lambda a: _poison(a, NAN))),
        ("w_pred (n, 2)", _with("w_pred", lambda a: a[:, :2])),
        ("missing radius", _drop("radius")),
        ("missing w_pred", _drop("w_pred")),
        ("tangents swapped", lambda a: {**a, "t1": a["t2"], "t2": a["t1"]}),
        ("normal not unit", _with("normal", lambda a: 2 * a)),
        ("q of the frictionless size", _with("q", lambda a: a[: a.size // 6])),
        ("missing mu", _drop("mu")),
    ]
    return [Case(f"friction lcp: {name}", "lcp", _edited("friction", edit))
            for name, edit in cases]


def _self_pair(a: np.ndarray) -> np.ndarray:
    a = np.array(a)
    a[-1, 0] = a[-1, 1]
    return a


def corpus() -> list[Case]:
    """Every malformed file: state files through `run --state`, a selection of them through
    `compare --state` too, and LCP files through `solve --lcp`."""
    state = (file_cases("state") + header_cases("state", "x", (7, 3))
             + header_cases("state", "mass", (7,)) + value_cases() + json_cases()
             + impulse_cases())
    again = [Case(c.name.replace("state:", "compare:", 1), "compare", c.build)
             for c in state[::7]]
    return (state + again + file_cases("lcp") + header_cases("lcp", "normal", (7, 3))
            + lcp_cases() + frictional_lcp_cases())
