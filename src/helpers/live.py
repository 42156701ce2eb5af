"""A matplotlib figure shown in an ipywidgets Image, updated in place (no pyplot, no Output).

Widgets change the artists a figure already has (``set_data``, ``set_height``...), then call
:meth:`LiveFigure.refresh`, which renders once with Agg and sends PNG bytes to the browser.
That is several times cheaper than clearing an Output widget and building a new figure.

:func:`show` displays a widget together with a static PNG of its figure in one output, so a
notebook read without a kernel (GitHub, nbviewer) still shows the picture.
"""

from __future__ import annotations

import base64
import io

import ipywidgets as widgets
from IPython.display import display
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["LiveFigure", "show"]


class LiveFigure:
    """A figure that lives in an ``ipywidgets.Image``; call :meth:`refresh` after changing it."""

    def __init__(self, figsize=(6, 4), dpi: int = 90):
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        FigureCanvasAgg(self.figure)
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))

    def png(self) -> bytes:
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png")
        return buffer.getvalue()

    def refresh(self) -> None:
        """Render the figure and hand the new PNG to the browser."""
        self.image.value = self.png()


def show(widget: widgets.Widget, live: LiveFigure | bytes, alt: str = "") -> None:
    """Display ``widget`` live, with a PNG of ``live``'s figure as its static stand-in.

    ``live`` is a :class:`LiveFigure` or the PNG bytes themselves. JupyterLab with ipywidgets
    shows the widget; renderers without a kernel or widget support (GitHub, nbviewer, a
    missing extension) fall back to the picture.
    """
    png = bytes(live) if isinstance(live, (bytes, bytearray)) else live.png()
    bundle = widget._repr_mimebundle_()
    bundle["image/png"] = base64.b64encode(png).decode("ascii")
    bundle["text/plain"] = alt or "an interactive figure (run the notebook to use it)"
    display(bundle, raw=True, metadata={"image/png": {"alt": alt}} if alt else None)
