"""Lesson 09's explorer, moved to :mod:`helpers.explorer.grid`; this name stays for notebooks
saved before the move (``from helpers.real_explorer import AttentionGrid``)."""

from .explorer.grid import *  # noqa: F403
from .explorer.grid import __all__  # noqa: F401
