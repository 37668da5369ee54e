"""OpenGL plumbing of the 3D view: the context format, shader programs and their uniforms, the
vertex arrays in the layouts the shaders read, and the framebuffers drawn into.

Shader sources come from the ``shaders`` package, with ``#include`` resolved here (GLSL has
none). Every problem is raised as a `GLFailure` with a one-line message for the user. All but
`surface_format` and `load_shader_text` need a current OpenGL context.
"""
from __future__ import annotations

import ctypes
import re

import numpy as np
from OpenGL import GL
from PySide6.QtGui import QOpenGLContext, QSurfaceFormat

import shaders

from .geometry import impostor_polygon, outward

# The version the view asks for, and the lowest it accepts from the driver (tests raise the
# latter to simulate a driver without OpenGL 3.3).
REQUEST_GL = (3, 3)
REQUIRED_GL = (3, 3)


class GLFailure(Exception):
    """An OpenGL problem with a one-line, user-readable message."""


def surface_format() -> QSurfaceFormat:
    """The context the view asks for: OpenGL 3.3 core, 24-bit depth, no multisampling (the
    impostors already have exact edges, and MSAA is costly in software rendering)."""
    fmt = QSurfaceFormat()
    fmt.setRenderableType(QSurfaceFormat.RenderableType.OpenGL)
    fmt.setVersion(*REQUEST_GL)
    fmt.setProfile(QSurfaceFormat.OpenGLContextProfile.CoreProfile)
    fmt.setDepthBufferSize(24)
    fmt.setSamples(0)
    return fmt


_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)


def load_shader_text(name: str, defines: tuple[str, ...] = ()) -> str:
    """Source of shader `name` from the shaders package, with ``#include "file"`` lines replaced
    by that file (GLSL has no include; this keeps the shared lighting code in one place) and
    ``#define NAME 1`` inserted after ``#version`` for each variant flag in `defines`."""
    text = _INCLUDE.sub(lambda m: shaders.source(m.group(1)), shaders.source(name))
    if defines:
        head, sep, rest = text.partition("\n")
        if not head.lstrip().startswith("#version"):
            head, sep, rest = "", "", text
        text = head + sep + "".join(f"#define {d} 1\n" for d in defines) + rest
    return text


def _first_error_line(log) -> str:
    """The first line of a compiler or linker log (bytes or text) that names an error (else its
    first line)."""
    if isinstance(log, bytes):
        log = log.decode(errors="replace")
    lines = [ln.strip() for ln in str(log).splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln
    return lines[0] if lines else "no log"


def _compile(kind, name: str, defines: tuple[str, ...] = ()) -> int:
    """A compiled shader object of type `kind` from shader file `name`."""
    try:
        text = load_shader_text(name, defines)
    except Exception as exc:  # missing file, bad encoding: still a clear message
        raise GLFailure(f"cannot read shader {name}: {exc}") from None
    shader = GL.glCreateShader(kind)
    GL.glShaderSource(shader, text)
    GL.glCompileShader(shader)
    if not GL.glGetShaderiv(shader, GL.GL_COMPILE_STATUS):
        log = _first_error_line(GL.glGetShaderInfoLog(shader))
        GL.glDeleteShader(shader)
        raise GLFailure(f"shader {name} failed to compile: {log}")
    return shader


def program(vert: str, frag: str, defines: tuple[str, ...] = ()) -> int:
    """A linked program from two shader files; `defines` are variant flags of the fragment
    shader (see load_shader_text)."""
    vs = _compile(GL.GL_VERTEX_SHADER, vert)
    try:
        fs = _compile(GL.GL_FRAGMENT_SHADER, frag, defines)
    except GLFailure:
        GL.glDeleteShader(vs)
        raise
    prog = GL.glCreateProgram()
    GL.glAttachShader(prog, vs)
    GL.glAttachShader(prog, fs)
    GL.glLinkProgram(prog)
    GL.glDeleteShader(vs)
    GL.glDeleteShader(fs)
    if not GL.glGetProgramiv(prog, GL.GL_LINK_STATUS):
        log = _first_error_line(GL.glGetProgramInfoLog(prog))
        GL.glDeleteProgram(prog)
        raise GLFailure(f"shaders {vert} + {frag} failed to link: {log}")
    return prog


def no_context_message() -> str:
    """What to report when no OpenGL context of the required version could be made."""
    return f"could not create an OpenGL {REQUIRED_GL[0]}.{REQUIRED_GL[1]} core context"


def check_version(context: QOpenGLContext) -> None:
    """Raise GLFailure if `context` is older than REQUIRED_GL."""
    fmt = context.format()
    version = (fmt.majorVersion(), fmt.minorVersion())
    if version < REQUIRED_GL:
        raise GLFailure(
            f"OpenGL {REQUIRED_GL[0]}.{REQUIRED_GL[1]} core is required, the driver "
            f"offers {version[0]}.{version[1]}")


class Uniforms:
    """Uniform locations, looked up once per (program, name), and setters by value type."""

    def __init__(self) -> None:
        self._locations: dict[tuple[int, str], int] = {}

    def location(self, prog: int, name: str) -> int:
        key = (prog, name)
        loc = self._locations.get(key)
        if loc is None:
            loc = self._locations[key] = GL.glGetUniformLocation(prog, name)
        return loc

    def set(self, prog: int, name: str, value) -> None:
        """Set uniform `name` of the program in use, `prog`: a bool or int (also samplers), a
        float, or an array of shape (2,), (3,), (4,) or (4, 4) (a row-major matrix)."""
        loc = self.location(prog, name)
        if loc < 0:
            return  # optimised away by the compiler
        if isinstance(value, bool):
            GL.glUniform1i(loc, int(value))
        elif isinstance(value, int):
            GL.glUniform1i(loc, value)
        elif isinstance(value, float):
            GL.glUniform1f(loc, value)
        else:
            a = np.asarray(value, dtype=np.float32)
            if a.shape == (2,):
                GL.glUniform2f(loc, *a.tolist())
            elif a.shape == (4, 4):
                GL.glUniformMatrix4fv(loc, 1, GL.GL_TRUE, a)
            elif a.shape == (3,):
                GL.glUniform3f(loc, *a.tolist())
            elif a.shape == (4,):
                GL.glUniform4f(loc, *a.tolist())
            else:
                raise ValueError(f"uniform {name}: unsupported shape {a.shape}")


def blend_over() -> None:
    """Blend colour "over" what is drawn, but leave the destination alpha at 1: the image is
    shown as opaque RGB32, whose fourth byte Qt requires to be 0xff (a pixel with alpha < 1 would
    otherwise reach screenshots as wrapped-around colours)."""
    GL.glBlendFuncSeparate(GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA, GL.GL_ZERO, GL.GL_ONE)


class Mesh:
    """A VAO with interleaved position/normal vertices (k, 6) float32 and optional triangle
    indices, which are made to face outward (see geometry.outward); `primitive` is a GL mode."""

    def __init__(self, verts: np.ndarray, idx: np.ndarray | None, primitive) -> None:
        self.primitive = primitive
        self.vao = GL.glGenVertexArrays(1)
        self.vbo = GL.glGenBuffers(1)
        self.ebo = GL.glGenBuffers(1) if idx is not None else 0
        GL.glBindVertexArray(self.vao)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        GL.glBufferData(GL.GL_ARRAY_BUFFER, verts.nbytes, verts, GL.GL_STATIC_DRAW)
        for loc, off in ((0, 0), (1, 12)):
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, 3, GL.GL_FLOAT, GL.GL_FALSE, 24, ctypes.c_void_p(off))
        if idx is not None:
            idx = outward(verts, idx)
            GL.glBindBuffer(GL.GL_ELEMENT_ARRAY_BUFFER, self.ebo)
            GL.glBufferData(GL.GL_ELEMENT_ARRAY_BUFFER, idx.nbytes, idx, GL.GL_STATIC_DRAW)
            self.count = int(idx.size)
        else:
            self.count = int(verts.shape[0])
        GL.glBindVertexArray(0)

    def draw(self) -> None:
        GL.glBindVertexArray(self.vao)
        if self.ebo:
            GL.glDrawElements(self.primitive, self.count, GL.GL_UNSIGNED_INT, ctypes.c_void_p(0))
        else:
            GL.glDrawArrays(self.primitive, 0, self.count)

    def delete(self) -> None:
        GL.glDeleteVertexArrays(1, [self.vao])
        GL.glDeleteBuffers(1, [self.vbo])
        if self.ebo:
            GL.glDeleteBuffers(1, [self.ebo])


class Impostors:
    """The marbles' VAO for marble.vert: the corners of the impostor polygon per vertex, and
    per instance (marble) its centre xyz (m), radius (m), colour rgb and orientation (unit
    quaternion body -> world, as x, y, z, w), float32 interleaved."""

    FLOATS = 11  # per instance
    STRIDE = 4 * FLOATS  # bytes

    def __init__(self) -> None:
        self.vao = GL.glGenVertexArrays(1)
        GL.glBindVertexArray(self.vao)
        self._corner_vbo = GL.glGenBuffers(1)
        corners = impostor_polygon()
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._corner_vbo)
        GL.glBufferData(GL.GL_ARRAY_BUFFER, corners.nbytes, corners, GL.GL_STATIC_DRAW)
        GL.glEnableVertexAttribArray(0)
        GL.glVertexAttribPointer(0, 2, GL.GL_FLOAT, GL.GL_FALSE, 8, ctypes.c_void_p(0))
        self._instance_vbo = GL.glGenBuffers(1)
        self.capacity = 0  # instances the buffer holds
        self.count = 0  # instances uploaded
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._instance_vbo)
        for loc, size, off in ((1, 3, 0), (2, 1, 12), (3, 3, 16), (4, 4, 28)):
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, size, GL.GL_FLOAT, GL.GL_FALSE, self.STRIDE,
                                     ctypes.c_void_p(off))
            GL.glVertexAttribDivisor(loc, 1)
        self._polygon_vertices = int(corners.size // 2)
        GL.glBindVertexArray(0)

    def upload(self, x: np.ndarray, radius: np.ndarray, colour: np.ndarray,
               orientation: np.ndarray | None = None) -> None:
        """New marbles: x (n, 3) m, radius (n,) m, colour (n, 3) RGB 0..1, orientation (n, 4)
        unit quaternions (w, x, y, z) body -> world (None: all unrotated)."""
        n = x.shape[0]
        data = np.empty((n, self.FLOATS), dtype=np.float32)
        data[:, 0:3] = x
        data[:, 3] = radius
        data[:, 4:7] = colour
        if orientation is None:
            data[:, 7:11] = (0.0, 0.0, 0.0, 1.0)
        else:
            data[:, 7:10] = orientation[:, 1:4]  # GLSL reads (x, y, z, w): q.xyz, q.w
            data[:, 10] = orientation[:, 0]
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._instance_vbo)
        if n > self.capacity:
            # Grow geometrically and keep the buffer: scene switches reuse it, frames of the
            # same size only overwrite it.
            self.capacity = max(n, 2 * self.capacity, 64)
            GL.glBufferData(GL.GL_ARRAY_BUFFER, self.capacity * self.STRIDE, None,
                            GL.GL_DYNAMIC_DRAW)
        if n:
            GL.glBufferSubData(GL.GL_ARRAY_BUFFER, 0, data.nbytes, data)
        self.count = n

    def draw(self) -> None:
        """Every marble, with the program in use."""
        GL.glBindVertexArray(self.vao)
        GL.glDrawArraysInstanced(GL.GL_TRIANGLE_STRIP, 0, self._polygon_vertices, self.count)


class Target:
    """The framebuffer object a view draws into: RGBA8 colour and 24-bit depth renderbuffers
    of `size` (w, h) pixels; made at the first `ensure`."""

    def __init__(self) -> None:
        self.fbo = 0
        self._buffers: list[int] = []
        self.size = (0, 0)

    def ensure(self, w: int, h: int) -> None:
        """(Re)allocate the buffers for w × h pixels unless they have that size."""
        if self.fbo and self.size == (w, h):
            return
        if not self.fbo:
            self.fbo = int(GL.glGenFramebuffers(1))
            self._buffers = [int(b) for b in GL.glGenRenderbuffers(2)]
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.fbo)
        for rb, internal, attachment in zip(
                self._buffers, (GL.GL_RGBA8, GL.GL_DEPTH_COMPONENT24),
                (GL.GL_COLOR_ATTACHMENT0, GL.GL_DEPTH_ATTACHMENT)):
            GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, rb)
            GL.glRenderbufferStorage(GL.GL_RENDERBUFFER, internal, w, h)
            GL.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, attachment, GL.GL_RENDERBUFFER, rb)
        GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, 0)
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            raise GLFailure(f"framebuffer incomplete (status 0x{int(status):x})")
        self.size = (w, h)
        self._raw = np.empty((h, w, 4), dtype=np.uint8)

    def read_back(self) -> np.ndarray:
        """The pixels as a new (h, w, 4) uint8 BGRA array, top row first (OpenGL's rows start
        at the bottom)."""
        w, h = self.size
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.fbo)
        GL.glReadBuffer(GL.GL_COLOR_ATTACHMENT0)
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 4)
        GL.glReadPixels(0, 0, w, h, GL.GL_BGRA, GL.GL_UNSIGNED_INT_8_8_8_8_REV,
                        self._raw.ctypes.data)
        # A new array each time: the GUI thread may still be showing the previous one.
        return np.ascontiguousarray(self._raw[::-1])


class GBuffer:
    """The G-buffer of deferred shading: `textures` normal, colour and depth, drawn into
    through `fbo`; sized by `ensure`."""

    def __init__(self) -> None:
        self.textures = tuple(int(t) for t in GL.glGenTextures(3))
        for tex in self.textures:
            GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER, GL.GL_NEAREST)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAG_FILTER, GL.GL_NEAREST)
        self.fbo = GL.glGenFramebuffers(1)
        self.size = (0, 0)
        GL.glBindTexture(GL.GL_TEXTURE_2D, 0)

    def ensure(self, w: int, h: int) -> None:
        """(Re)allocate the textures for a w × h pixel viewport unless they have that size."""
        if self.size == (w, h):
            return
        normal, albedo, depth = self.textures
        # Normals as 10-bit unsigned (n/2 + 1/2): half the bytes of a float format, and fine
        # enough that highlights do not band.
        for tex, internal, fmt, typ in ((normal, GL.GL_RGB10_A2, GL.GL_RGBA,
                                         GL.GL_UNSIGNED_INT_2_10_10_10_REV),
                                        (albedo, GL.GL_RGBA8, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE),
                                        (depth, GL.GL_DEPTH_COMPONENT24, GL.GL_DEPTH_COMPONENT,
                                         GL.GL_UNSIGNED_INT)):
            GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
            GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, internal, w, h, 0, fmt, typ, None)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self.fbo)
        for attachment, tex in ((GL.GL_COLOR_ATTACHMENT0, normal),
                                (GL.GL_COLOR_ATTACHMENT1, albedo),
                                (GL.GL_DEPTH_ATTACHMENT, depth)):
            GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, attachment, GL.GL_TEXTURE_2D, tex, 0)
        GL.glDrawBuffers(2, [GL.GL_COLOR_ATTACHMENT0, GL.GL_COLOR_ATTACHMENT1])
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            raise GLFailure(f"G-buffer framebuffer incomplete (status 0x{int(status):x})")
        self.size = (w, h)


def shadow_map(size: int) -> tuple[int, int, bool]:
    """A size × size depth texture with hardware comparison (sampler2DShadow) and a framebuffer
    drawing into it: (texture, framebuffer, whether the framebuffer is complete)."""
    tex = GL.glGenTextures(1)
    GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
    GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_DEPTH_COMPONENT24, size, size, 0,
                    GL.GL_DEPTH_COMPONENT, GL.GL_FLOAT, None)
    for pname, value in ((GL.GL_TEXTURE_MIN_FILTER, GL.GL_LINEAR),
                         (GL.GL_TEXTURE_MAG_FILTER, GL.GL_LINEAR),
                         (GL.GL_TEXTURE_WRAP_S, GL.GL_CLAMP_TO_EDGE),
                         (GL.GL_TEXTURE_WRAP_T, GL.GL_CLAMP_TO_EDGE),
                         (GL.GL_TEXTURE_COMPARE_MODE, GL.GL_COMPARE_REF_TO_TEXTURE),
                         (GL.GL_TEXTURE_COMPARE_FUNC, GL.GL_LEQUAL)):
        GL.glTexParameteri(GL.GL_TEXTURE_2D, pname, value)
    fbo = GL.glGenFramebuffers(1)
    GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, fbo)
    GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_DEPTH_ATTACHMENT, GL.GL_TEXTURE_2D, tex, 0)
    GL.glDrawBuffer(GL.GL_NONE)
    GL.glReadBuffer(GL.GL_NONE)
    status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
    GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)
    return tex, fbo, status == GL.GL_FRAMEBUFFER_COMPLETE
