"""GLSL sources, shipped as package data and read at run time."""
from importlib import resources


def source(name: str) -> str:
    """Text of shader file `name` (e.g. "marble.frag")."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
