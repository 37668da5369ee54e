"""The 3D view: ray-cast impostor marbles in their container, an orbit camera and picking.

`MarbleView` is the widget; the modules under it are the camera and the ray casts (numpy),
the geometry (numpy), the OpenGL plumbing (glsl), the renderer and the shared render thread.
"""
from .widget import MarbleView

__all__ = ["MarbleView"]
