"""Line charts of a Read's cost against file size, for ``toolconf bench``.

A small renderer on Pillow alone (matplotlib is not a dependency): one chart,
several series, log or linear axes, a legend outside the plot on the right.
With the vector font it draws at twice the requested size and halves the
image with a box filter, which smooths lines and text while keeping the inside
of every marker exactly its series' palette colour. The output depends only on the arguments and the
installed Pillow: the same call gives the same PNG bytes.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

__all__ = [
    "PALETTE",
    "Series",
    "format_bytes",
    "format_count",
    "format_seconds",
    "linear_ticks",
    "log_ticks",
    "render",
]

RGB = tuple[int, int, int]
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

# Okabe & Ito's colour-blind-safe palette, without its yellow (unreadable on
# white); black last, since the frame and the text are near-black. Series i
# gets PALETTE[i % 7]; each further round through the palette changes the
# marker shape, so that series sharing a colour stay apart.
PALETTE: tuple[RGB, ...] = (
    (0x00, 0x72, 0xB2),  # blue
    (0xD5, 0x5E, 0x00),  # vermillion
    (0x00, 0x9E, 0x73),  # bluish green
    (0xCC, 0x79, 0xA7),  # reddish purple
    (0xE6, 0x9F, 0x00),  # orange
    (0x56, 0xB4, 0xE9),  # sky blue
    (0x00, 0x00, 0x00),  # black
)
_MARKERS = ("circle", "square", "triangle", "diamond")

_WHITE: RGB = (255, 255, 255)
_TEXT: RGB = (0x22, 0x22, 0x22)
_FRAME: RGB = (0x44, 0x44, 0x44)
_GRID: RGB = (0xDD, 0xDD, 0xDD)
_MUTED: RGB = (0x77, 0x77, 0x77)
_LEGEND_EDGE: RGB = (0xBB, 0xBB, 0xBB)

_EPS = 1e-9  # tolerance, in decades or in steps, for a tick sitting on an axis end
_MICRO = "\u00b5"  # MICRO SIGN, as format_seconds writes it


@dataclass(frozen=True, slots=True)
class Series:
    """One line of the chart: its legend label, its (x, y) points, its dash style.

    The points need not be sorted: the line joins them in order of x.
    ``colour``, when given, replaces the palette's colour (for a line that is
    a yardstick rather than one of the things compared); the series still
    takes its place in the palette's order.
    """

    label: str
    points: tuple[tuple[float, float], ...]  # (x, y)
    dashed: bool = False
    colour: RGB | None = None


# -- number formats ------------------------------------------------------------


def _three_digits(value: float) -> str:
    """``value`` (>= 0) to at most three significant digits, trailing zeros dropped."""
    decimals = max(0, 2 - math.floor(math.log10(value))) if value > 0 else 0
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_bytes(n: float) -> str:
    """A byte count in binary units, three significant digits at most.

    ``1024 -> "1 KiB"``, ``262144 -> "256 KiB"``, ``1000 -> "1000 B"``,
    ``10**6 -> "977 KiB"``. Negative counts keep their sign.
    """
    if not math.isfinite(n):
        return f"{n} B"
    sign = "-" if n < 0 else ""
    magnitude = abs(n)
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    k = 0
    while k < len(units) - 1 and magnitude >= 1024 ** (k + 1):
        k += 1
    text = _three_digits(magnitude / 1024**k)
    if float(text) >= 1024 and k < len(units) - 1:  # 1023.9 KiB rounds up to 1 MiB
        k += 1
        text = _three_digits(magnitude / 1024**k)
    return f"{sign}{text} {units[k]}"


def format_count(n: float) -> str:
    """A count in K (thousands) and M (millions), three significant digits at most.

    ``52 -> "52"``, ``25063 -> "25.1K"``, ``1000 -> "1K"``, ``1.25e7 -> "12.5M"``.
    Negative counts keep their sign.
    """
    if not math.isfinite(n):
        return f"{n}"
    sign = "-" if n < 0 else ""
    magnitude = abs(n)
    units = ("", "K", "M", "G", "T")
    k = 0
    while k < len(units) - 1 and magnitude >= 1000 ** (k + 1):
        k += 1
    text = _three_digits(magnitude / 1000**k)
    if float(text) >= 1000 and k < len(units) - 1:  # 999.9K rounds up to 1M
        k += 1
        text = _three_digits(magnitude / 1000**k)
    return f"{sign}{text}{units[k]}"


def format_seconds(s: float) -> str:
    """A duration in s, ms, µs or ns, three significant digits at most.

    ``2.1e-6 -> "2.1 µs"``, ``0.0015 -> "1.5 ms"``, ``2.0 -> "2 s"``; long
    durations stay in seconds (``120 -> "120 s"``), zero is ``"0 s"``.
    """
    if not math.isfinite(s):
        return f"{s} s"
    if s == 0:
        return "0 s"
    sign = "-" if s < 0 else ""
    magnitude = abs(s)
    scales = ((1.0, "s"), (1e-3, "ms"), (1e-6, _MICRO + "s"), (1e-9, "ns"))
    i = 0
    while i < len(scales) - 1 and magnitude < scales[i][0]:
        i += 1
    text = _three_digits(magnitude / scales[i][0])
    if i > 0 and float(text) >= 1000:  # 999.99 µs rounds up to 1 ms
        i -= 1
        text = _three_digits(magnitude / scales[i][0])
    return f"{sign}{text} {scales[i][1]}"


# -- ticks ---------------------------------------------------------------------


def _exact(mantissa: int, exponent: int) -> float:
    """``mantissa * 10**exponent`` as the nearest float (``10.0**-6`` may be off by an ulp)."""
    return float(f"{mantissa}e{exponent}")


def linear_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """About ``target`` ticks at multiples of 1, 2 or 5 times a power of ten in [lo, hi].

    Always at least two when ``lo < hi`` and ``target >= 4`` (the step is at
    most about twice ``(hi - lo) / target``). ``lo == hi`` gives ``[lo]``.
    Raises ValueError on non-finite bounds, ``lo > hi`` or ``target < 1``.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi or target < 1:
        raise ValueError(f"bad tick range [{lo}, {hi}] for {target} ticks")
    if lo == hi:
        return [lo]
    raw = (hi - lo) / target
    exponent = math.floor(math.log10(raw))
    step = _exact(10, exponent)
    for mantissa in (1, 2, 5):
        if _exact(mantissa, exponent) >= raw * (1 - _EPS):
            step = _exact(mantissa, exponent)
            break
    first = math.ceil(lo / step - _EPS)
    last = math.floor(hi / step + _EPS)
    # Rounding to 12 significant digits turns 3 * 0.1 back into 0.3.
    return [float(f"{k * step:.12g}") for k in range(first, last + 1)]


def log_ticks(lo: float, hi: float, max_ticks: int = 10, base: int = 10) -> list[float]:
    """Ticks for a log axis spanning [lo, hi]: the powers of ``base`` in it, thinned out.

    Base 10: with three or more powers of ten in range, those (every second,
    third... decade when there are more than ``max_ticks``). With fewer, which
    is when the range spans less than about two decades, the 1, 2 and 5
    multiples of powers of ten in range; if even those are fewer than two (a
    range inside one of [1, 2], [2, 5], [5, 10] times a power of ten),
    ``linear_ticks``.

    Any other base (1024 for byte counts, say): see ``_base_log_ticks``.
    Either way there are always at least two ticks when ``lo < hi``.
    Raises ValueError unless ``0 < lo <= hi``, both finite, ``max_ticks >= 2``
    and ``base >= 2``.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or not 0 < lo <= hi or max_ticks < 2:
        raise ValueError(f"bad log tick range [{lo}, {hi}] for {max_ticks} ticks")
    if base < 2:
        raise ValueError(f"bad log tick base {base}: must be an integer of at least 2")
    if base != 10:
        return _base_log_ticks(lo, hi, max_ticks, base)
    first = math.ceil(math.log10(lo) - _EPS)
    last = math.floor(math.log10(hi) + _EPS)
    if last - first + 1 >= 3:
        exponents = range(first, last + 1)
        stride = _stride(exponents, max_ticks)
        return [_exact(1, k) for k in exponents if k % stride == 0]
    multiples = [
        _exact(mantissa, k)
        for k in range(first - 1, last + 1)
        for mantissa in (1, 2, 5)
        if lo * (1 - _EPS) <= _exact(mantissa, k) <= hi * (1 + _EPS)
    ]
    if len(multiples) >= 2:
        return multiples
    return linear_ticks(lo, hi)


def _stride(exponents: range, max_ticks: int) -> int:
    """Keep the exponents that are multiples of this (1, 1e3, 1e6... for 3).

    The smallest stride leaving at most ``max_ticks`` of them, narrowed again
    as far as needed to leave two.
    """
    stride = math.ceil(len(exponents) / max_ticks)
    while stride > 1 and sum(1 for k in exponents if k % stride == 0) < 2:
        stride -= 1
    return stride


_MIN_POWER_TICKS = 6  # fewer powers of a non-decimal base than this get intermediate ticks
_MAX_SUB_STEPS = 5  # at most this many intermediate steps between two powers of the base


def _integer_root(base: int, m: int) -> int | None:
    """The integer s with ``s**m == base``, if there is one."""
    s = round(math.pow(base, 1 / m))
    for candidate in (s - 1, s, s + 1):
        if candidate >= 2 and candidate**m == base:
            return candidate
    return None


def _powers(root: int, lo: float, hi: float) -> list[tuple[int, float]]:
    """(j, root**j) for the powers of ``root`` in [lo, hi], each the nearest float."""
    scale = math.log(root)
    first = math.ceil(math.log(lo) / scale - _EPS)
    last = math.floor(math.log(hi) / scale + _EPS)
    pairs = [(j, float(Fraction(root) ** j)) for j in range(first, last + 1)]
    return [(j, v) for j, v in pairs if lo * (1 - _EPS) <= v <= hi * (1 + _EPS)]


def _base_log_ticks(lo: float, hi: float, max_ticks: int, base: int) -> list[float]:
    """``log_ticks`` for a base other than 10, in this order of preference.

    1. Six or more powers of ``base`` in range: those, every second, third...
       when there are more than ``max_ticks``, as for decades.
    2. Else, if ``base`` is s**m for an integer s and 2 <= m <= 5 (the largest
       such m: 1024 = 4**5), the powers of s in range (1 KiB, 4 KiB, 16 KiB,
       64 KiB, 256 KiB, 1 MiB...). These are like minor ticks, so more of
       them are allowed: above ``2 * max_ticks``, every second (third...)
       power of s counted from each power of ``base`` (1 KiB, 16 KiB,
       256 KiB, 1 MiB...), so that the powers of ``base`` stay ticks.
    3. Else the powers of ``base``, or of its smallest integer root (2 for
       1024), if two or more are in range.
    4. Else ``linear_ticks`` in units of the power of ``base`` at or below
       ``lo`` (1.2 KiB, 1.4 KiB... rather than 1200, 1400...), or plain
       ``linear_ticks`` below 1.
    """
    powers = _powers(base, lo, hi)
    if len(powers) >= _MIN_POWER_TICKS:
        exponents = range(powers[0][0], powers[-1][0] + 1)
        stride = _stride(exponents, max_ticks)
        return [v for k, v in powers if k % stride == 0]
    for m in range(_MAX_SUB_STEPS, 1, -1):
        root = _integer_root(base, m)
        if root is None:
            continue
        sub = _powers(root, lo, hi)
        if len(sub) < 2:
            break
        kept = sub
        for every in range(2, m + 1):
            if len(kept) <= 2 * max_ticks:
                break
            thinner = [(j, v) for j, v in sub if (j % m) % every == 0]
            if len(thinner) < 2:
                break
            kept = thinner
        return [v for _, v in kept]
    if len(powers) >= 2:
        return [v for _, v in powers]
    smallest = next(
        (s for m in range(int(math.log2(base)), 1, -1) if (s := _integer_root(base, m))), None
    )
    if smallest is not None and len(fine := _powers(smallest, lo, hi)) >= 2:
        return [v for _, v in fine]
    exponent = max(0, math.floor(math.log(lo) / math.log(base) + _EPS))
    unit = float(base**exponent)
    if exponent > 0 and unit > lo * (1 + _EPS):  # log rounding put lo a hair below it
        unit /= base
    return [float(f"{t * unit:.12g}") for t in linear_ticks(lo / unit, hi / unit)]


# -- text ----------------------------------------------------------------------


def _load_font(size: int) -> Font:
    """Pillow's default font at ``size`` px (Aileron, Pillow >= 10.1 with FreeType).

    Older Pillows take no size and give the fixed bitmap font.
    """
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow 10.0: load_default() has no size argument
        return ImageFont.load_default()


class _Text:
    """A font and how to place its text by the top-left corner of its capitals.

    Pillow's default vector font has no glyph for µ, which ``format_seconds``
    writes, so µ is drawn as a u with a descender on its left stem. The bitmap
    fallback font only encodes Latin-1: other characters become "?".
    """

    def __init__(self, size: int) -> None:
        self.font = _load_font(size)
        self.vector = isinstance(self.font, ImageFont.FreeTypeFont)
        _, top, _, bottom = self.font.getbbox("Hg")
        self.top = int(top)
        self.height = int(bottom - top)
        self._micro_stem: tuple[int, int, int, int] | None = None
        if self.vector:
            self._micro_stem = self._measure_micro_stem()

    def _measure_micro_stem(self) -> tuple[int, int, int, int] | None:
        """The box, relative to the drawing origin, of the stroke that turns u into µ."""
        width = int(self.font.getlength("u")) + 4
        height = int(self.font.getbbox("p")[3]) + 4
        u = Image.new("L", (width, height), 0)
        ImageDraw.Draw(u).text((0, 0), "u", font=self.font, fill=255)
        box = u.getbbox()
        descender = self.font.getbbox("p")[3]
        if box is None:
            return None
        left, top, right, bottom = box
        middle = (top + bottom) // 2
        row = u.crop((left, middle, right, middle + 1)).tobytes()
        stem = 0
        while stem < len(row) and row[stem] >= 128:
            stem += 1
        if stem == 0:
            return None
        return (left, middle, left + stem - 1, int(descender))

    def clean(self, text: str) -> str:
        """``text`` on one line, in characters the font can draw."""
        text = " ".join(text.splitlines())
        if not self.vector:
            text = text.encode("latin-1", "replace").decode("latin-1")
        return text

    def width(self, text: str) -> int:
        text = self.clean(text)
        if self.vector:
            text = text.replace(_MICRO, "u")
        return math.ceil(self.font.getlength(text))

    def draw(self, draw: ImageDraw.ImageDraw, x: float, y: float, text: str, fill: RGB) -> None:
        """Draw ``text`` with its capitals' top-left corner at (x, y)."""
        text = self.clean(text)
        y -= self.top
        if not self.vector or _MICRO not in text:
            draw.text((x, y), text, font=self.font, fill=fill)
            return
        for i, part in enumerate(text.split(_MICRO)):
            if i:
                draw.text((x, y), "u", font=self.font, fill=fill)
                if self._micro_stem is not None:
                    left, top, right, bottom = self._micro_stem
                    draw.rectangle((x + left, y + top, x + right, y + bottom), fill=fill)
                x += self.font.getlength("u")
            draw.text((x, y), part, font=self.font, fill=fill)
            x += self.font.getlength(part)

    def fit(self, text: str, max_width: int) -> str:
        """``text``, cut and ended with "..." if wider than ``max_width``."""
        text = self.clean(text)
        if self.width(text) <= max_width:
            return text
        while text and self.width(text + "...") > max_width:
            text = text[:-1]
        return text.rstrip() + "..."


@lru_cache(maxsize=32)
def _text(size: int) -> _Text:
    return _Text(size)


# -- layout helpers ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Axis:
    """One axis: its data range, scale and ticks, mapped onto [start, end] pixels."""

    lo: float
    hi: float
    log: bool
    ticks: tuple[float, ...]
    start: float = 0.0
    end: float = 1.0

    def _scaled(self, value: float) -> float:
        return math.log10(value) if self.log else value

    def at(self, value: float) -> float:
        """The pixel coordinate of ``value``."""
        lo, hi = self._scaled(self.lo), self._scaled(self.hi)
        return self.start + (self._scaled(value) - lo) / (hi - lo) * (self.end - self.start)

    def placed(self, start: float, end: float) -> _Axis:
        return _Axis(self.lo, self.hi, self.log, self.ticks, start, end)


def _axis(values: Sequence[float], log: bool, base: int = 10) -> _Axis:
    """The axis for ``values`` (already valid for its scale), padded 5% each way.

    ``base`` is that of the ticks of a log axis; a linear one ignores it.
    """
    if not values:
        lo, hi = (1.0, 10.0) if log else (0.0, 1.0)
    elif log:
        a, b = math.log10(min(values)), math.log10(max(values))
        if b - a < 1e-12:  # one value: a decade around it
            a, b = a - 0.5, b + 0.5
        else:
            pad = (b - a) * 0.05
            a, b = a - pad, b + pad
        lo, hi = 10.0**a, 10.0**b
    else:
        lo, hi = min(values), max(values)
        pad = (abs(lo) * 0.1 or 1.0) if hi == lo else (hi - lo) * 0.05
        new_lo = lo - pad
        if lo >= 0 > new_lo:  # do not cross zero for data that never does
            new_lo = 0.0
        lo, hi = new_lo, hi + pad
    ticks = log_ticks(lo, hi, base=base) if log else linear_ticks(lo, hi)
    return _Axis(lo, hi, log, tuple(ticks))


def _usable(value: float, log: bool) -> bool:
    return math.isfinite(value) and (value > 0 or not log)


def _spread(centres: Sequence[float], sizes: Sequence[int], gap: int) -> list[int]:
    """Indices of the labels to show: every k-th, for the smallest k where none overlap.

    Never fewer than two labels out of two or more: if even the first and the
    last overlap, both are kept.
    """
    count = len(centres)
    for stride in range(1, max(count - 1, 1) + 1):
        keep = list(range(0, count, stride))
        if all(
            abs(centres[b] - centres[a]) >= (sizes[a] + sizes[b]) / 2 + gap
            for a, b in itertools.pairwise(keep)
        ):
            return keep
    return [0, count - 1]


def _dashed_line(
    draw: ImageDraw.ImageDraw,
    points: Sequence[tuple[float, float]],
    *,
    fill: RGB,
    width: int,
    on: float,
    off: float,
) -> None:
    """A polyline in dashes of length ``on`` separated by ``off``, the pattern
    running on across vertices."""
    phase = 0.0  # distance into the current on+off period
    period = on + off
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        length = math.hypot(x1 - x0, y1 - y0)
        done = 0.0
        while done < length:
            if phase < on:
                step = min(on - phase, length - done)
                a, b = done / length, (done + step) / length
                draw.line(
                    (
                        x0 + (x1 - x0) * a,
                        y0 + (y1 - y0) * a,
                        x0 + (x1 - x0) * b,
                        y0 + (y1 - y0) * b,
                    ),
                    fill=fill,
                    width=width,
                )
            else:
                step = min(period - phase, length - done)
            done += step
            phase = (phase + step) % period


def _marker(
    draw: ImageDraw.ImageDraw, shape: str, centre: tuple[float, float], *, r: float, fill: RGB
) -> None:
    """A filled marker of "radius" ``r``, the shapes sized to look alike."""
    x, y = centre
    if shape == "square":
        r *= 0.9
        draw.rectangle((x - r, y - r, x + r, y + r), fill=fill)
    elif shape == "triangle":
        draw.polygon(
            ((x, y - r * 1.15), (x + r * 1.1, y + r * 0.75), (x - r * 1.1, y + r * 0.75)), fill=fill
        )
    elif shape == "diamond":
        r *= 1.2
        draw.polygon(((x, y - r), (x + r, y), (x, y + r), (x - r, y)), fill=fill)
    else:
        draw.ellipse((x - r, y - r, x + r, y + r), fill=fill)


# -- the chart -----------------------------------------------------------------


def render(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    x_format: Callable[[float], str] = format_bytes,
    y_format: Callable[[float], str] = format_seconds,
    log_x: bool = True,
    log_y: bool = True,
    size: tuple[int, int] = (1000, 620),
    x_tick_base: int = 10,
    y_tick_base: int = 10,
) -> bytes:
    """The chart of ``series`` as the bytes of an RGB PNG of ``size`` (width, height).

    Series i is drawn in ``PALETTE[i % len(PALETTE)]`` (or its own ``colour``), a line through its
    points sorted by x, with a marker on each point. Points that cannot be
    placed are skipped: a non-finite coordinate, or a zero or negative one on
    a log axis. Axes span the remaining points padded by 5% (a single value
    gets a decade around it on a log axis, 10% on a linear one); with none
    left, or no series at all, the axes are drawn anyway around a "no data"
    note. Gridlines and tick labels sit at the ticks of ``log_ticks`` or
    ``linear_ticks``, formatted by ``x_format`` and ``y_format`` (bytes and
    seconds by default), every second (third...) label shown if they would
    overlap. On a log axis the ticks are at powers of ``x_tick_base`` or
    ``y_tick_base``: 10 by default, 1024 puts a bytes axis on 1 KiB, 1 MiB...
    (with 4 KiB, 16 KiB... between them on a short range); a linear axis
    ignores its base. The y label is written horizontally above the y axis;
    the legend is right of the plot, long labels cut short. Fonts and strokes
    scale with the size. Raises ValueError only for a size below 1x1 pixel or
    a tick base below 2.
    """
    width, height = size
    if width < 1 or height < 1:
        raise ValueError(f"image size must be at least 1x1, got {size!r}")
    for name, base in (("x_tick_base", x_tick_base), ("y_tick_base", y_tick_base)):
        if base < 2:
            raise ValueError(f"{name} must be an integer of at least 2, got {base!r}")
    cleaned = [
        [(x, y) for x, y in s.points if _usable(x, log_x) and _usable(y, log_y)] for s in series
    ]
    for points in cleaned:
        points.sort(key=lambda p: p[0])
    x_axis = _axis([x for points in cleaned for x, _ in points], log_x, x_tick_base)
    y_axis = _axis([y for points in cleaned for _, y in points], log_y, y_tick_base)
    no_data = not any(cleaned)

    # Draw at 2x and halve with a box filter (smooth edges, exact marker colours),
    # except with the fixed-size bitmap font, which would shrink to half.
    unit = min(max(min(width / 1000, height / 620), 0.75), 4.0)
    scale = 2 if _text(12).vector else 1

    def px(value: float) -> int:
        return max(1, round(value * unit * scale))

    title_font = _text(px(18))
    label_font = _text(px(14))
    tick_font = _text(px(12))
    legend_font = _text(px(13))
    note_font = _text(px(16))

    canvas_w, canvas_h = width * scale, height * scale
    image = Image.new("RGB", (canvas_w, canvas_h), _WHITE)
    draw = ImageDraw.Draw(image)

    margin, gap, tick_len = px(14), px(6), px(5)
    x_labels = [x_format(t) for t in x_axis.ticks]
    y_labels = [y_format(t) for t in y_axis.ticks]
    x_label_widths = [tick_font.width(t) for t in x_labels]
    y_label_widths = [tick_font.width(t) for t in y_labels]

    # Legend: a swatch (a line segment with the marker on it) and the label, per series.
    swatch, legend_pad = px(34), px(8)
    row_h = max(legend_font.height, px(10)) + px(7)
    label_room = max(int(canvas_w * 0.3) - swatch - gap - 2 * legend_pad, px(40))
    legend_labels = [legend_font.fit(s.label, label_room) for s in series]
    legend_w = 0
    if series:
        legend_w = 2 * legend_pad + swatch + gap + max(legend_font.width(t) for t in legend_labels)

    top = margin + title_font.height + px(10) + label_font.height + px(8)
    bottom = margin + label_font.height + gap + tick_font.height + gap + tick_len
    left = margin + max(y_label_widths, default=0) + gap + tick_len
    right = margin + max(x_label_widths[-1] // 2 if x_label_widths else 0, 0)
    if series:
        right = max(right, margin + legend_w + px(14))

    def snap(value: float) -> int:
        # A line of width 2k from an even coordinate covers whole pixels of the
        # halved image: snapped rules stay crisp instead of smearing over two.
        return round(value / scale) * scale

    x0, y0 = snap(left), snap(top)
    x1 = max(snap(canvas_w - right), x0 + scale)
    y1 = max(snap(canvas_h - bottom), y0 + scale)
    x_axis = x_axis.placed(x0, x1)
    y_axis = y_axis.placed(y1, y0)

    # Grid, frame, ticks.
    rule = scale * max(1, round(unit))
    for t in x_axis.ticks:
        gx = snap(x_axis.at(t))
        draw.line((gx, y0, gx, y1), fill=_GRID, width=rule)
        draw.line((gx, y1, gx, y1 + tick_len), fill=_FRAME, width=rule)
    for t in y_axis.ticks:
        gy = snap(y_axis.at(t))
        draw.line((x0, gy, x1, gy), fill=_GRID, width=rule)
        draw.line((x0 - tick_len, gy, x0, gy), fill=_FRAME, width=rule)
    for frame_line in (
        (x0, y0, x1 + rule - 1, y0),
        (x0, y1, x1 + rule - 1, y1),
        (x0, y0, x0, y1 + rule - 1),
        (x1, y0, x1, y1 + rule - 1),
    ):
        draw.line(frame_line, fill=_FRAME, width=rule)

    x_centres = [x_axis.at(t) for t in x_axis.ticks]
    for i in _spread(x_centres, x_label_widths, px(10)):
        x = min(max(x_centres[i] - x_label_widths[i] / 2, 0), canvas_w - x_label_widths[i])
        tick_font.draw(draw, x, y1 + tick_len + gap, x_labels[i], _TEXT)
    y_centres = [y_axis.at(t) for t in y_axis.ticks]
    y_heights = [tick_font.height] * len(y_centres)
    for i in _spread(y_centres, y_heights, px(6)):
        y = min(max(y_centres[i] - tick_font.height / 2, 0), canvas_h - tick_font.height)
        tick_font.draw(draw, x0 - tick_len - gap - y_label_widths[i], y, y_labels[i], _TEXT)

    # Title centred over the plot, y label above the y axis, x label under the ticks.
    title_text = title_font.fit(title, canvas_w - 2 * margin)
    title_w = title_font.width(title_text)
    title_x = min(max((x0 + x1 - title_w) / 2, margin), canvas_w - margin - title_w)
    title_font.draw(draw, title_x, margin, title_text, _TEXT)
    y_label_text = label_font.fit(y_label, canvas_w - 2 * margin)
    label_font.draw(draw, margin, y0 - px(8) - label_font.height, y_label_text, _TEXT)
    x_label_text = label_font.fit(x_label, canvas_w - 2 * margin)
    x_label_w = label_font.width(x_label_text)
    x_label_x = min(max((x0 + x1 - x_label_w) / 2, margin), canvas_w - margin - x_label_w)
    label_font.draw(draw, x_label_x, canvas_h - margin - label_font.height, x_label_text, _TEXT)

    # The data.
    line_w, radius = px(2), px(3.5)
    for i, points in enumerate(cleaned):
        colour = series[i].colour or PALETTE[i % len(PALETTE)]
        shape = _MARKERS[(i // len(PALETTE)) % len(_MARKERS)]
        placed = [(x_axis.at(x), y_axis.at(y)) for x, y in points]
        if len(placed) > 1:
            if series[i].dashed:
                _dashed_line(draw, placed, fill=colour, width=line_w, on=px(8), off=px(5))
            else:
                draw.line(placed, fill=colour, width=line_w, joint="curve")
        for x, y in placed:
            _marker(draw, shape, (x, y), r=radius, fill=colour)
    if no_data:
        note = "no data"
        note_font.draw(
            draw,
            (x0 + x1 - note_font.width(note)) / 2,
            (y0 + y1 - note_font.height) / 2,
            note,
            _MUTED,
        )

    # The legend: a white box right of the plot, top-aligned with it; rows that
    # do not fit the height give way to a "+N more" line.
    if series:
        lx0 = x1 + px(14)
        rows = len(series)
        fits = max((canvas_h - margin - y0 - 2 * legend_pad) // row_h, 1)
        shown = rows if rows <= fits else fits - 1
        lines = shown + (1 if shown < rows else 0)
        box = (lx0, y0, lx0 + legend_w, y0 + 2 * legend_pad + lines * row_h - px(7))
        draw.rectangle(box, fill=_WHITE, outline=_LEGEND_EDGE, width=px(1))
        for i in range(shown):
            colour = series[i].colour or PALETTE[i % len(PALETTE)]
            shape = _MARKERS[(i // len(PALETTE)) % len(_MARKERS)]
            top_y = y0 + legend_pad + i * row_h
            mid_y = top_y + legend_font.height / 2
            segment = [(lx0 + legend_pad, mid_y), (lx0 + legend_pad + swatch, mid_y)]
            if series[i].dashed:
                _dashed_line(draw, segment, fill=colour, width=line_w, on=px(8), off=px(5))
            else:
                draw.line(segment, fill=colour, width=line_w)
            _marker(draw, shape, (lx0 + legend_pad + swatch / 2, mid_y), r=radius, fill=colour)
            text_x = lx0 + legend_pad + swatch + gap
            legend_font.draw(draw, text_x, top_y, legend_labels[i], _TEXT)
        if shown < rows:
            more = f"+{rows - shown} more"
            legend_font.draw(draw, lx0 + legend_pad, y0 + legend_pad + shown * row_h, more, _MUTED)

    if scale > 1:
        image = image.reduce(scale)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
