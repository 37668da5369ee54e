"""The pointer of the X server itself (the XTest extension, as xdotool uses it): wheel events
and clicks and drags that Qt receives from the server exactly as from a mouse. Events Qt is sent
from inside the process are not the same: Qt never hands a synthesized wheel event on to the
parents of a widget that ignores it, so only real ones can show where the wheel goes."""
from __future__ import annotations

import ctypes
import os

# X's button 1 is the left one; 4 and 5 are the wheel's notches up and down.
LEFT, WHEEL_UP, WHEEL_DOWN = 1, 4, 5


class _XDisplay:
    """A connection to the X server of DISPLAY (Xvfb's in tests) with libX11 and XTest loaded;
    `close()` ends it."""

    def __init__(self):
        self._x11 = ctypes.CDLL("libX11.so.6")
        self._xtst = ctypes.CDLL("libXtst.so.6")
        self._x11.XOpenDisplay.restype = ctypes.c_void_p
        self._x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        self._x11.XFlush.argtypes = [ctypes.c_void_p]
        self._x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
        self._display = self._x11.XOpenDisplay(os.environ["DISPLAY"].encode())
        if not self._display:
            raise RuntimeError(f"cannot open X display {os.environ['DISPLAY']}")

    def close(self) -> None:
        if self._display:
            self._x11.XCloseDisplay(self._display)
            self._display = None


class XPointer(_XDisplay):
    """Moves the X server's pointer and turns its wheel (DISPLAY's server, Xvfb's in tests)."""

    def __init__(self):
        super().__init__()
        self._xtst.XTestFakeMotionEvent.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                    ctypes.c_int, ctypes.c_ulong]
        self._xtst.XTestFakeButtonEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int,
                                                    ctypes.c_ulong]

    def wheel(self, widget, notches: int) -> None:
        """Move the pointer to the middle of `widget` and turn the wheel `notches` notches
        (> 0: down, towards the user; < 0: up)."""
        centre = widget.mapToGlobal(widget.rect().center())
        self._xtst.XTestFakeMotionEvent(self._display, -1, centre.x(), centre.y(), 0)
        button = WHEEL_DOWN if notches > 0 else WHEEL_UP
        for _ in range(abs(notches)):
            self._xtst.XTestFakeButtonEvent(self._display, button, 1, 0)
            self._xtst.XTestFakeButtonEvent(self._display, button, 0, 0)
        self._x11.XFlush(self._display)

    def click(self, widget, point) -> None:
        """Move the pointer to `point` (a QPoint in `widget`'s coordinates) and click the left
        button there."""
        at = widget.mapToGlobal(point)
        self._xtst.XTestFakeMotionEvent(self._display, -1, at.x(), at.y(), 0)
        self._xtst.XTestFakeButtonEvent(self._display, LEFT, 1, 0)
        self._xtst.XTestFakeButtonEvent(self._display, LEFT, 0, 0)
        self._x11.XFlush(self._display)

    def drag(self, widget, start, end, moves: int = 10) -> None:
        """Press the left button at `start`, move in `moves` steps to `end` and let go (points
        of `widget`, QPoint): a drag as the server delivers it."""
        first, last = widget.mapToGlobal(start), widget.mapToGlobal(end)
        self._xtst.XTestFakeMotionEvent(self._display, -1, first.x(), first.y(), 0)
        self._xtst.XTestFakeButtonEvent(self._display, LEFT, 1, 0)
        for k in range(1, moves + 1):
            x = first.x() + (last.x() - first.x()) * k // moves
            y = first.y() + (last.y() - first.y()) * k // moves
            self._xtst.XTestFakeMotionEvent(self._display, -1, x, y, 10)
        self._xtst.XTestFakeButtonEvent(self._display, LEFT, 0, 10)
        self._x11.XFlush(self._display)


# X keysyms (X11/keysymdef.h) of the keys the tests press; a letter's is its lower-case code.
KEYSYMS = {"Escape": 0xFF1B, "Ctrl": 0xFFE3}


class XKeyboard(_XDisplay):
    """Presses keys through the X server's keyboard (XTest): the window that has the X input
    focus gets them, as from a real keyboard, so a key reaches only the window that is active."""

    def __init__(self):
        super().__init__()
        self._x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        self._xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int,
                                                 ctypes.c_ulong]

    def press(self, text: str) -> None:
        """Press and release a key written as in the action table ("Escape", "Ctrl+W", "Q")."""
        names = text.split("+")
        syms = [KEYSYMS.get(n) or ord(n.lower()) for n in names]
        codes = [self._x11.XKeysymToKeycode(self._display, s) for s in syms]
        for code in codes:
            self._xtst.XTestFakeKeyEvent(self._display, code, 1, 0)
        for code in reversed(codes):
            self._xtst.XTestFakeKeyEvent(self._display, code, 0, 0)
        self._x11.XFlush(self._display)
