"""Lesson 10's explorer, moved to :mod:`helpers.explorer.induction`; this name stays for
notebooks saved before the move (``from helpers.induction_explorer import InductionExplorer``)."""

from .explorer.induction import *  # noqa: F403
from .explorer.induction import __all__  # noqa: F401
