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
        """The figure as PNG bytes: the last refresh's if there was one, else a new render."""
        if self.image.value:
            return bytes(self.image.value)
        return self._render()

    def refresh(self) -> None:
        """Render the figure and hand the new PNG to the browser.

        The first render lays the figure out (constrained layout); later ones keep that layout
        instead of solving it again, which halves the cost of an update.
        """
        self.image.value = self._render()
        if self.figure.get_layout_engine() is not None:
            self.figure.set_layout_engine(None)

    def _render(self) -> bytes:
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png")
        return buffer.getvalue()


def show(widget: widgets.Widget, live: LiveFigure | bytes | memoryview, alt: str = "") -> None:
    """Display ``widget`` live, with a PNG of ``live``'s figure as its static stand-in.

    ``live`` is a :class:`LiveFigure` (its last rendered PNG is used) or PNG bytes.
    JupyterLab with ipywidgets shows the widget; renderers without a kernel or widget support
    (GitHub, nbviewer, a missing extension) fall back to the picture.
    """
    png = live.png() if isinstance(live, LiveFigure) else bytes(live)
    bundle = widget._repr_mimebundle_()
    bundle["image/png"] = base64.b64encode(png).decode("ascii")
    bundle["text/plain"] = alt or "an interactive figure (run the notebook to use it)"
    display(bundle, raw=True, metadata={"image/png": {"alt": alt}} if alt else None)
