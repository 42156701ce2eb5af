"""A matplotlib figure shown in an ipywidgets Image, updated in place (no pyplot, no Output).

Widgets change the artists a figure already has (``set_data``, ``set_height``...), then call
:meth:`LiveFigure.refresh`, which renders with Agg and sends PNG bytes to the browser.
That is several times cheaper than clearing an Output widget and building a new figure.

Cheaper still, for figures where only a few artists change: name them with
:meth:`LiveFigure.animate`. The rest of the figure (axes, ticks, colour bars, static images)
is then drawn once, kept as a background, and each refresh pastes the background and draws
only the named artists on top (matplotlib's "blitting"). If an update has to change the
background too (new axis limits, say), pass a ``background`` key to :meth:`LiveFigure.refresh`:
one background is drawn and kept per key.

:func:`show` displays a widget together with a static PNG of its figure in one output, so a
notebook read without a kernel (GitHub, nbviewer) still shows the picture.
"""

from __future__ import annotations

import io
import string
from collections.abc import Callable, Hashable, Iterable, Sequence

import ipywidgets as widgets
from IPython.display import display
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image
from traitlets import Unicode

from .front import PressedStates, Slider
from .plots import image_bundle

__all__ = ["LiveFigure", "show", "NamedImage", "pressed_states", "slider"]


class NamedImage(widgets.Image):
    """An ``ipywidgets.Image`` whose ``tooltip`` works: the picture's text alternative.

    ipywidgets 8.1.9's front end sets a widget's ``title`` from its ``tooltip`` only when the
    model's ``description`` is empty, and reads ``description.length`` to find out; ``Image``
    has no ``description``, so an Image with a tooltip fails to display ("Cannot read
    properties of undefined (reading 'length')" in ``updateTooltip``). This subclass syncs an
    empty ``description`` (the front end's ``ImageModel`` keeps any extra attribute), and its
    ``tooltip`` becomes the ``<img>``'s ``title``, which screen readers and axe-core accept as
    the image's name.
    """

    description = Unicode("", help="always empty: lets the tooltip become the title").tag(sync=True)


class LiveFigure:
    """A figure that lives in an ``ipywidgets.Image``; call :meth:`refresh` after changing it."""

    def __init__(self, figsize=(6, 4), dpi: int = 90):
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        FigureCanvasAgg(self.figure)
        self.image = NamedImage(format="png", layout=widgets.Layout(max_width="100%"))
        self._animated: list[Artist] = []
        self._backgrounds: dict = {}  # background key -> saved pixels of the static parts
        self._pngs: dict = {}  # picture key -> PNG bytes (refresh(key=...))

    def animate(self, artists: Iterable[Artist]) -> None:
        """Name the artists that change between refreshes; they are drawn in this order.

        Everything else is treated as background: drawn once (per ``background`` key of
        :meth:`refresh`) and reused, so a refresh costs only the named artists.
        """
        self._animated = list(artists)
        for artist in self._animated:
            artist.set_animated(True)
        self._backgrounds.clear()
        self._pngs.clear()

    def png(self) -> bytes:
        """The figure as PNG bytes: the last refresh's if there was one, else a new render."""
        if self.image.value:
            return bytes(self.image.value)
        return self._render()

    def refresh(
        self, background: Hashable = None, key: Hashable = None, alt: str | None = None
    ) -> None:
        """Render the figure and hand the new PNG to the browser.

        The first render lays the figure out (constrained layout); later ones keep that layout
        instead of solving it again, which halves the cost of an update. With animated artists
        (:meth:`animate`), ``background`` names the state of everything else: pass a new key
        whenever the update changed a non-animated artist (e.g. ``ax.set_ylim``), the same key
        otherwise. ``key``, if given, names the whole picture (e.g. the widgets' values): its
        PNG is kept, and a later refresh with the same key sends it again without drawing.
        ``alt``, if given, becomes the picture's text alternative (its ``tooltip``, the
        ``<img>``'s title): say what the new picture shows, so that it never goes stale.
        """
        if alt is not None:
            self.image.tooltip = alt
        if key is not None and key in self._pngs:
            self.image.value = self._pngs[key]
            return
        if self._animated:
            png = self._blit(background)
        else:
            png = self._render()
        if key is not None:
            self._pngs[key] = png
        self.image.value = png
        if self.figure.get_layout_engine() is not None:
            self.figure.set_layout_engine(None)

    def film(
        self,
        slider: Slider,
        draw: Callable[[object], str],
        background: Callable[[object], Hashable] | None = None,
        key: Hashable = None,
    ) -> None:
        """Draw the figure at every option of ``slider`` and hand the pictures to the browser,
        so that a move shows its picture at once, never waiting for the kernel.

        ``draw(option)`` puts the figure in its state for that option (as an observer would)
        and returns the picture's text alternative. ``background(option)``, with animated
        artists, names the state of the rest (see :meth:`refresh`). ``key`` names the state
        of everything the slider does not set (another control's value): the pictures of a
        key already filmed are sent again without drawing. The figure is left at the slider's
        value when filmed (its artists do not follow later moves: the browser shows the held
        pictures). Use it instead of observing the slider, and call it again when another
        control changes what the pictures show.
        """
        cache_key = ("film", id(slider), key)  # a figure may serve several sliders
        if cache_key not in self._pngs:
            pictures, alts = [], []
            for option in slider.options:
                alt = draw(option)
                if not isinstance(alt, str) or not alt.strip():
                    raise ValueError(
                        f"film: draw({option!r}) must return the picture's text alternative "
                        f"(a non-empty str), got {alt!r}"
                    )
                if self._animated:
                    rest = background(option) if background is not None else None
                    pictures.append(self._blit(rest, small=True))
                else:
                    self.figure.canvas.draw()
                    pictures.append(self._canvas_png(small=True))
                alts.append(alt)
                if self.figure.get_layout_engine() is not None:
                    self.figure.set_layout_engine(None)  # laid out once, as refresh does
            self._pngs[cache_key] = pictures, alts
        pictures, alts = self._pngs[cache_key]
        draw(slider.value)  # the artists as the picture shown
        slider.hold_pictures(self.image, pictures, alts)

    def _render(self) -> bytes:
        if self._animated:  # savefig would leave the animated artists out
            return self._blit(None, keep=False)
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png")
        return buffer.getvalue()

    def _blit(self, key: Hashable, keep: bool = True, small: bool = False) -> bytes:
        canvas = self.figure.canvas
        if keep and key in self._backgrounds:
            canvas.restore_region(self._backgrounds[key])
        else:
            canvas.draw()  # lays out, then draws every artist that is not animated
            if keep:
                self._backgrounds[key] = canvas.copy_from_bbox(self.figure.bbox)
        for artist in self._animated:
            self.figure.draw_artist(artist)
        return self._canvas_png(small)

    def _canvas_png(self, small: bool = False) -> bytes:
        """The canvas's pixels as PNG. ``small``: at most 256 colours, about a third of the
        bytes for these figures, and as fast to encode (for the many pictures of :meth:`film`,
        which all go to the browser at once)."""
        canvas = self.figure.canvas
        width, height = canvas.get_width_height()
        pixels = Image.frombuffer(
            "RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1
        ).convert("RGB")
        buffer = io.BytesIO()
        if small:
            pixels.quantize(256, method=Image.Quantize.FASTOCTREE).save(
                buffer, format="png", compress_level=6
            )
        else:
            pixels.save(buffer, format="png", compress_level=1)
        return buffer.getvalue()


def _images(widget: widgets.Widget) -> list[NamedImage]:
    """Every :class:`NamedImage` in ``widget``'s tree (children of boxes and stacks)."""
    if isinstance(widget, NamedImage):
        return [widget]
    children = getattr(widget, "children", ()) or ()
    return [image for child in children for image in _images(child)]


def show(widget: widgets.Widget, live: LiveFigure | bytes | memoryview, alt: str) -> None:
    """Display ``widget`` live, with a PNG of ``live``'s figure as its static stand-in.

    ``live`` is a :class:`LiveFigure` (its last rendered PNG is used) or PNG bytes. ``alt`` is
    the picture's text alternative: what it shows and the number that matters. It goes on the
    static PNG (an ``<img alt>``, see :func:`helpers.plots.image_bundle`) and, as the
    ``tooltip`` (the ``title`` attribute, which screen readers and axe accept as an image's
    name), on every :class:`NamedImage` of ``widget`` (a :class:`LiveFigure`'s) that has none.
    JupyterLab with ipywidgets shows the widget; renderers without a kernel or widget support
    (GitHub, nbviewer, a missing extension) fall back to the picture.
    """
    png = live.png() if isinstance(live, LiveFigure) else bytes(live)
    static = image_bundle(png, alt)  # raises if alt is empty
    for image in _images(widget):
        if not image.tooltip:
            image.tooltip = alt
    bundle = widget._repr_mimebundle_()
    bundle.update(static)
    display(bundle, raw=True, metadata={"image/png": {"alt": alt}})


def slider(
    description: str,
    options: Sequence,
    value=None,
    text: str | Callable[[object], str] = "{}",
) -> Slider:
    """The course's slider: over ``options`` (numbers, in order), starting at ``value``.

    ``description`` names it (the label a screen reader reads, e.g. ``"d_k"``); ``text`` says a
    value in words, for the readout beside it and for a screen reader: a format string with one
    ``{}`` (``"d_k = {}"``, ``"n = {:,}"``) or a function of the value
    (``lambda s: f"step {s} of 2000"``).
    Arrow keys move it one option, Page Up/Down a tenth of them (at least one), Home and End to
    the ends; "−" and "+" buttons beside it do one step. For a figure, hand it every option's
    picture with :meth:`LiveFigure.film` (a move then shows its picture at once, in the
    browser); for anything else, observe ``"value"`` as with an ipywidgets slider::

        dk = slider("d_k", [1, 4, 16, 64, 256], value=64, text="d_k = {}")
        live.film(dk, draw)  # draw(d) sets the figure for d_k = d, returns its text alternative
        dk.observe(lambda change: print(change["new"]), names="value")

    Why not ``ipywidgets.IntSlider``: ipywidgets 8 draws it with noUiSlider, whose handle has no
    accessible name (axe: aria-input-field-name) and whose value a screen reader hears as a bare
    number; a native range input with a label has the slider role, name, keys and value text
    built into the browser (:class:`helpers.front.Slider`).
    """
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f"a slider needs a description (its name), got {description!r}")
    options = list(options)
    if not options:
        raise ValueError(f"slider {description!r}: options is empty")
    if len(set(map(repr, options))) != len(options):
        raise ValueError(f"slider {description!r}: options repeat a value: {options}")
    value = options[0] if value is None else value
    if value not in options:
        raise ValueError(f"slider {description!r}: value {value!r} is not one of {options}")
    if isinstance(text, str):
        fields = [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
        if fields not in ([""], ["0"]):
            raise ValueError(
                f"slider {description!r}: text needs exactly one {{}} (a format such as "
                f"{{:,}} may follow its colon), got {text!r}"
            )
        say = text.format
    elif callable(text):
        say = text
    else:
        raise ValueError(f"slider {description!r}: text must be a format string or a function")
    labels = []
    for option in options:
        try:
            labels.append(str(say(option)))
        except Exception as error:  # the lesson's format or function: say which option broke it
            raise ValueError(
                f"slider {description!r}: its text for option {option!r} failed: "
                f"{type(error).__name__}: {error}"
            ) from error
    return Slider(
        options=options, labels=labels, description=description, index=options.index(value)
    )


def pressed_states() -> PressedStates:
    """A widget that shows nothing and tells a screen reader which toggle buttons are pressed:
    put it in the box beside ``ipywidgets.ToggleButtons`` (or a ``ToggleButton``). ipywidgets
    8 shows the pressed one by its colour only; this keeps each button's ``aria-pressed`` equal
    to its state, in the browser."""
    return PressedStates(layout=widgets.Layout(display="none"))
