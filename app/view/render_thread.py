"""The render thread shared by every 3D view, its priority, and a view's link to its renderer.

All views render in one QThread of their own (RENDER_THREAD), so the GUI thread neither runs
OpenGL nor waits for it. On Linux that thread runs at a raised nice value (RENDER_NICE): when the
CPU is short the 3D view yields to the simulation and the plots.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Signal
from PySide6.QtGui import QOffscreenSurface, QOpenGLContext

from .glsl import surface_format


# True: every view renders in one thread of its own (shared by all views), so that the GUI
# thread neither runs OpenGL nor waits for it; with software rendering a frame takes tens of
# milliseconds of wall time, during which the plots and the HUD keep repainting. False (or a
# platform without threaded OpenGL): the views render in the GUI thread, from its event loop.
RENDER_THREAD = True
# The render thread runs with its nice value raised by this much (Linux), and so do the
# rasteriser threads of Mesa's software renderer llvmpipe (named llvmpipe-N; Qt's probe for
# threaded OpenGL starts them from the GUI thread): when the CPU is short, the 3D view yields
# to the simulation and to the plots instead of sharing it with them, and with CPU to spare it
# renders as before.
RENDER_NICE = 10

_thread: QThread | None = None


def _lower_priority() -> None:
    """Raise the calling thread's nice value by RENDER_NICE (Linux, where a nice value is a
    thread's own; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        try:
            tid = threading.get_native_id()
            nice = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(19, nice + RENDER_NICE))
        except OSError:
            pass


def share_priority(prefix: str) -> None:
    """Give this process's threads whose name starts with `prefix` at least the calling
    thread's nice value (Linux; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        for t in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{t}/comm") as f:
                if f.read().startswith(prefix) and os.getpriority(os.PRIO_PROCESS, int(t)) < mine:
                    os.setpriority(os.PRIO_PROCESS, int(t), mine)
    except OSError:
        pass


def shared_thread() -> QThread | None:
    """The running render thread (started on first use), or None to render in the GUI
    thread."""
    global _thread
    if not RENDER_THREAD or not QOpenGLContext.supportsThreadedOpenGL():
        return None
    if _thread is None:
        _thread = QThread()
        _thread.setObjectName("render")
        _thread.started.connect(_lower_priority, Qt.ConnectionType.DirectConnection)
        _thread.start()
        app = QCoreApplication.instance()
        app.aboutToQuit.connect(_stop_shared_thread)
        atexit.register(_stop_shared_thread)
    return _thread


def _stop_shared_thread() -> None:
    """Quit and join the render thread (on quitting; views still alive render nothing)."""
    global _thread
    thread, _thread = _thread, None
    if thread is not None:
        thread.quit()
        thread.wait()
        _stopped.append(thread)  # keep the QThread object: deleting it is only safe here


_stopped: list[QThread] = []


class Channel(QObject):
    """The widget's side of its connections to the renderer (so that the widget itself is
    never the sender a renderer call waits on)."""

    create = Signal()
    render = Signal(object)
    render_now = Signal(object)
    release = Signal()


class Link:
    """A widget's renderer, its surface and the connections to them; `close()` releases the
    renderer in its thread (blocking), once, and is safe to call from the widget's destroyed
    signal (it holds no reference to the widget)."""

    def __init__(self, renderer: QObject, on_rendered) -> None:
        """`renderer`: a new renderer.Renderer, still in the GUI thread; `on_rendered(result)` is
        called in the GUI thread with each Result of a queued rendering."""
        self.renderer = renderer
        self.channel = Channel()
        thread = shared_thread()
        self.thread = thread
        if thread is not None:
            self.renderer.moveToThread(thread)
            queued, blocking = (Qt.ConnectionType.QueuedConnection,
                                Qt.ConnectionType.BlockingQueuedConnection)
        else:
            queued, blocking = (Qt.ConnectionType.QueuedConnection,
                                Qt.ConnectionType.DirectConnection)
        self.channel.create.connect(self.renderer.create, blocking)
        self.channel.render.connect(self.renderer.render, queued)
        self.channel.render_now.connect(self.renderer.render_now, blocking)
        self.channel.release.connect(self.renderer.release, blocking)
        self.renderer.rendered.connect(on_rendered, Qt.ConnectionType.QueuedConnection)
        self.channel.create.emit()
        # The surface is made in the GUI thread, as Qt requires; it can be used from any.
        self.surface = QOffscreenSurface()
        self.surface.setFormat(surface_format())
        self.surface.create()
        self.renderer.surface = self.surface  # before any rendering is queued
        self.closed = False

    def usable(self) -> bool:
        """False once closed, or once the render thread has stopped (a blocking call would
        then wait forever)."""
        return not self.closed and (self.thread is None or self.thread is _thread)

    def close(self) -> None:
        """Release the renderer (blocking) and destroy the surface; later calls do nothing."""
        if self.closed:
            return
        if self.usable():
            self.channel.release.emit()
        self.closed = True
        if shiboken6.isValid(self.surface):  # at exit Qt may have deleted it already
            self.surface.destroy()
