"""The bench chart renderer: valid deterministic PNGs, every series visible, ticks, formats."""

from __future__ import annotations

import io
import math
from collections.abc import Callable

import pytest
from PIL import Image, ImageFont

from conformance.instruments.bench import plot
from conformance.instruments.bench.plot import (
    PALETTE,
    Series,
    format_bytes,
    format_seconds,
    linear_ticks,
    log_ticks,
    render,
)

SIZES = tuple(float(1024 * 4**k) for k in range(8))


def line(label: str, base: float, per_byte: float, dashed: bool = False) -> Series:
    return Series(label, tuple((x, base + per_byte * x) for x in SIZES), dashed)


def chart(
    series: list[Series],
    *,
    title: str = "Read cost",
    y_label: str = "time",
    x_format: Callable[[float], str] = format_bytes,
    y_format: Callable[[float], str] = format_seconds,
    log_x: bool = True,
    log_y: bool = True,
    size: tuple[int, int] = (1000, 620),
) -> Image.Image:
    data = render(
        series,
        title=title,
        x_label="file size",
        y_label=y_label,
        x_format=x_format,
        y_format=y_format,
        log_x=log_x,
        log_y=log_y,
        size=size,
    )
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def plot_area_counts(image: Image.Image) -> dict[tuple[int, ...], int]:
    """Pixels per colour in the left half, where the plot is (the legend is on the right)."""
    left = image.convert("RGB").crop((0, 0, image.width // 2, image.height))
    colours = left.getcolors(maxcolors=left.width * left.height) or []
    return {colour: n for n, colour in colours if isinstance(colour, tuple)}


def plot_area_colours(image: Image.Image) -> set[tuple[int, ...]]:
    return set(plot_area_counts(image))


def count_colour(image: Image.Image, colour: tuple[int, int, int]) -> int:
    return plot_area_counts(image).get(colour, 0)


SAMPLE = [
    line("reference: full Read", 40e-6, 2e-9),
    line("reference: dedup hit", 8e-6, 0.0),
    line("my-impl: full Read", 90e-6, 3e-9, dashed=True),
]


def test_the_bytes_are_a_png_of_the_requested_size() -> None:
    data = render(SAMPLE, title="t", x_label="x", y_label="y", size=(800, 500))
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    assert image.size == (800, 500)
    assert image.mode == "RGB"


def test_the_same_input_gives_the_same_bytes() -> None:
    first = render(SAMPLE, title="t", x_label="x", y_label="y")
    assert render(SAMPLE, title="t", x_label="x", y_label="y") == first
    assert render(SAMPLE[:2], title="t", x_label="x", y_label="y") != first


def test_every_series_is_drawn_in_its_palette_colour_inside_the_plot() -> None:
    series = [line(f"s{i}", 10e-6 * (i + 1), 1e-9 * (i + 1), dashed=i % 2 == 1) for i in range(7)]
    colours = plot_area_colours(chart(series))
    for colour in PALETTE[: len(series)]:
        assert colour in colours


def test_the_palette_cycles_and_series_past_it_still_render() -> None:
    series = [line(f"s{i}", 1e-6 * (i + 1), 1e-9, dashed=i >= 7) for i in range(len(PALETTE) + 2)]
    colours = plot_area_colours(chart(series))
    assert PALETTE[0] in colours
    assert PALETTE[1] in colours


def test_a_dashed_series_is_drawn_with_gaps() -> None:
    solid = chart([line("a", 10e-6, 1e-9)])
    dashed = chart([line("a", 10e-6, 1e-9, dashed=True)])
    in_solid, in_dashed = count_colour(solid, PALETTE[0]), count_colour(dashed, PALETTE[0])
    assert 0 < in_dashed < in_solid


@pytest.mark.parametrize(
    "series",
    [
        pytest.param([], id="no-series"),
        pytest.param([Series("empty", ())], id="empty-series"),
        pytest.param([Series("a", ()), Series("b", (), dashed=True)], id="all-empty"),
        pytest.param([Series("zeros", ((0.0, 1.0), (-5.0, 2.0), (3.0, 0.0)))], id="non-positive"),
        pytest.param([Series("nan", ((math.nan, 1.0), (math.inf, 2.0)))], id="non-finite"),
    ],
)
def test_nothing_to_plot_still_renders_the_axes(series: list[Series]) -> None:
    image = chart(series)
    assert image.size == (1000, 620)
    # The frame and the "no data" note are there; no series colour is.
    colours = plot_area_colours(image)
    assert not colours & set(PALETTE[:-1])


def test_non_positive_points_are_skipped_on_log_axes_but_kept_on_linear_ones() -> None:
    series = [
        Series("a", ((0.0, 1e-3), (-1.0, 2e-3), (1024.0, 0.0), (2048.0, 3e-3), (4096.0, 4e-3)))
    ]
    assert PALETTE[0] in plot_area_colours(chart(series))
    on_log = count_colour(chart(series), PALETTE[0])
    on_linear = count_colour(chart(series, log_x=False, log_y=False), PALETTE[0])
    assert 0 < on_log < on_linear


@pytest.mark.parametrize(("log_x", "log_y"), [(True, True), (False, False), (True, False)])
def test_a_single_point_is_drawn(log_x: bool, log_y: bool) -> None:
    image = chart([Series("one", ((4096.0, 2e-6),))], log_x=log_x, log_y=log_y)
    assert PALETTE[0] in plot_area_colours(image)


def test_a_single_zero_point_on_linear_axes_is_drawn() -> None:
    image = chart([Series("zero", ((0.0, 0.0),))], log_x=False, log_y=False)
    assert PALETTE[0] in plot_area_colours(image)


@pytest.mark.parametrize("size", [(1, 1), (60, 40), (300, 200), (2400, 1500)])
def test_any_size_renders(size: tuple[int, int]) -> None:
    long_label = "a rather long implementation name: full Read of a big file " * 3
    assert chart([line(long_label, 1e-5, 1e-9)], size=size).size == size


def test_a_size_below_one_pixel_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1x1"):
        render(SAMPLE, title="t", x_label="x", y_label="y", size=(0, 10))


def test_many_series_fit_the_legend_without_raising() -> None:
    series = [line(f"series {i}", 1e-6 * (i + 1), 1e-9) for i in range(60)]
    assert chart(series, size=(600, 300)).size == (600, 300)


def test_custom_formats_are_used_for_the_tick_labels() -> None:
    seen: list[float] = []

    def fmt(value: float) -> str:
        seen.append(value)
        return f"{value:g}"

    chart([line("a", 1e-5, 1e-9)], x_format=fmt, y_format=fmt)
    assert 1e4 in seen  # an x decade
    assert 1e-4 in seen  # a y decade


def test_the_bitmap_font_fallback_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pillow < 10.1 or without FreeType: a fixed bitmap font, Latin-1 only."""
    monkeypatch.setattr(plot, "_load_font", lambda size: ImageFont.load_default_imagefont())
    plot._text.cache_clear()
    try:
        series = [*SAMPLE, Series("ünïcode … label", ((1.0, 1e-6), (10.0, 1e-5)))]
        image = chart(series, title="…", y_label="time (µs)")
        assert image.size == (1000, 620)
        assert PALETTE[0] in plot_area_colours(image)
    finally:
        plot._text.cache_clear()


# -- number formats ------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (1, "1 B"),
        (512, "512 B"),
        (1000, "1000 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (10_000, "9.77 KiB"),
        (100_000, "97.7 KiB"),
        (262_144, "256 KiB"),
        (1_000_000, "977 KiB"),
        (1024 * 1023.9, "1 MiB"),
        (1_048_576, "1 MiB"),
        (1_073_741_824, "1 GiB"),
        (5 * 1024**4, "5 TiB"),
        (0.5, "0.5 B"),
        (0.0625, "0.0625 B"),
        (-2048, "-2 KiB"),
    ],
)
def test_format_bytes(n: float, text: str) -> None:
    assert format_bytes(n) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0"),
        (52, "52"),
        (999, "999"),
        (1000, "1K"),
        (25_063, "25.1K"),
        (999_950, "1M"),
        (12_338_525, "12.3M"),
        (0.5, "0.5"),
        (-1500, "-1.5K"),
    ],
)
def test_format_count(n: float, text: str) -> None:
    assert plot.format_count(n) == text


def test_a_series_with_its_own_colour_is_drawn_in_it_and_keeps_its_place() -> None:
    grey = (0x99, 0x99, 0x99)
    series = [line("a", 10e-6, 1e-9), line("yardstick", 20e-6, 2e-9), line("c", 30e-6, 3e-9)]
    series[1] = Series(series[1].label, series[1].points, dashed=True, colour=grey)
    colours = plot_area_colours(chart(series))
    assert {grey, PALETTE[0], PALETTE[2]} <= colours
    assert PALETTE[1] not in colours


@pytest.mark.parametrize(
    ("s", "text"),
    [
        (0.0, "0 s"),
        (2.1e-6, "2.1 µs"),
        (1e-6, "1 µs"),
        (0.0015, "1.5 ms"),
        (2.0, "2 s"),
        (120.0, "120 s"),
        (1e-3, "1 ms"),
        (0.9999999, "1 s"),
        (999.99e-6, "1 ms"),
        (3.5e-9, "3.5 ns"),
        (5e-10, "0.5 ns"),
        (1.234e-12, "0.00123 ns"),
        (123.456e-6, "123 µs"),
        (12.345e-3, "12.3 ms"),
        (-0.0015, "-1.5 ms"),
    ],
)
def test_format_seconds(s: float, text: str) -> None:
    assert format_seconds(s) == text


@pytest.mark.parametrize("k", range(-12, 13))
def test_powers_of_ten_format_as_round_seconds(k: int) -> None:
    number = float(format_seconds(float(f"1e{k}")).split()[0])
    assert math.log10(number) == round(math.log10(number))


# -- ticks ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "ticks"),
    [
        (1.0, 1e6, [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]),
        (0.9, 1100.0, [1.0, 10.0, 100.0, 1e3]),
        (3e-7, 2e-3, [1e-6, 1e-5, 1e-4, 1e-3]),
        (2.0, 8.0, [2.0, 5.0]),
        (0.5, 3.0, [0.5, 1.0, 2.0]),
        (0.9, 11.0, [1.0, 2.0, 5.0, 10.0]),
        (3.0, 300.0, [5.0, 10.0, 20.0, 50.0, 100.0, 200.0]),
        (1.1, 1.9, [1.2, 1.4, 1.6, 1.8]),
        (5.5, 9.0, [6.0, 7.0, 8.0, 9.0]),
    ],
)
def test_log_ticks(lo: float, hi: float, ticks: list[float]) -> None:
    assert log_ticks(lo, hi) == ticks


def test_log_ticks_thin_out_many_decades_on_round_exponents() -> None:
    ticks = log_ticks(1e-15, 1e15, max_ticks=10)
    assert ticks == [float(f"1e{k}") for k in range(-15, 16) if k % 4 == 0]
    assert len(log_ticks(1e-3, 1e3, max_ticks=2)) >= 2


@pytest.mark.parametrize("lo", [1e-9, 0.37, 1.0, 1.9, 7.3, 99.0, 1234.5])
@pytest.mark.parametrize("ratio", [1.001, 1.05, 1.5, 2.0, 3.3, 9.9, 10.0, 47.0, 1e4, 1e30])
def test_log_ticks_always_give_two_ticks_inside_the_range(lo: float, ratio: float) -> None:
    hi = lo * ratio
    ticks = log_ticks(lo, hi)
    assert len(ticks) >= 2
    assert ticks == sorted(set(ticks))
    assert all(lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9) for t in ticks)


@pytest.mark.parametrize(
    ("lo", "hi", "ticks"),
    [
        (0.0, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (0.0, 10.0, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]),
        (-1.0, 1.0, [-1.0, -0.5, 0.0, 0.5, 1.0]),
        (0.13, 0.31, [0.15, 0.2, 0.25, 0.3]),
        (3.0, 3.0, [3.0]),
    ],
)
def test_linear_ticks(lo: float, hi: float, ticks: list[float]) -> None:
    assert linear_ticks(lo, hi) == ticks


@pytest.mark.parametrize("span", [1e-12, 0.07, 1.0, 3.3, 999.0, 1e20])
@pytest.mark.parametrize("lo", [-5.0, 0.0, 0.123, 1e6])
def test_linear_ticks_always_give_two_ticks(lo: float, span: float) -> None:
    hi = lo + span * max(1.0, abs(lo))
    assert len(linear_ticks(lo, hi)) >= 2


@pytest.mark.parametrize(
    ("lo", "hi"), [(0.0, 1.0), (-1.0, 1.0), (2.0, 1.0), (1.0, math.inf), (math.nan, 1.0)]
)
def test_log_ticks_refuse_a_range_a_log_axis_cannot_have(lo: float, hi: float) -> None:
    with pytest.raises(ValueError, match="bad log tick range"):
        log_ticks(lo, hi)


# -- base-1024 ticks -----------------------------------------------------------

KiB, MiB, GiB, TiB = 1024.0, 1024.0**2, 1024.0**3, 1024.0**4


def fours(first: int, last: int) -> list[float]:
    return [float(4**k) for k in range(first, last + 1)]


@pytest.mark.parametrize(
    ("lo", "hi", "ticks"),
    [
        # Three powers of 1024: the powers of 4 between them (the chart's 5% padding too).
        (KiB, GiB, fours(5, 15)),
        (KiB / 2, 2 * GiB, fours(5, 15)),
        (1000.0, 1e6, fours(5, 9)),
        # Six or more powers of 1024: those alone, thinned past max_ticks.
        (1.0, 1024.0**5, [1.0, KiB, MiB, GiB, TiB, 1024.0**5]),
        (0.9, 1024.0**6 * 1.1, [1024.0**k for k in range(7)]),
        # Narrow ranges: powers of 2, then linear steps in KiB.
        (KiB, 3 * KiB, [KiB, 2 * KiB]),
        (KiB, 1.5 * KiB, [KiB * (1 + k / 10) for k in range(6)]),
        (3 * KiB, 3.5 * KiB, [KiB * (3 + k / 10) for k in range(6)]),
        (600.0, 700.0, [600.0, 620.0, 640.0, 660.0, 680.0, 700.0]),
    ],
)
def test_log_ticks_base_1024(lo: float, hi: float, ticks: list[float]) -> None:
    assert log_ticks(lo, hi, base=1024) == pytest.approx(ticks, rel=1e-12)


def test_base_1024_ticks_label_as_round_binary_sizes() -> None:
    labels = [format_bytes(t) for t in log_ticks(KiB, GiB, base=1024)]
    assert labels == [
        *("1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB"),
        *("1 MiB", "4 MiB", "16 MiB", "64 MiB", "256 MiB"),
        "1 GiB",
    ]


def test_base_1024_ticks_are_exact_powers_of_two() -> None:
    for t in log_ticks(1 / 64, 16 * GiB, base=1024):
        assert math.log2(t) == round(math.log2(t))


def test_dense_powers_of_4_are_thinned_keeping_the_powers_of_1024() -> None:
    # 1 KiB..1 TiB has 16 powers of 4; above 2 * max_ticks, every second one
    # counted from each power of 1024.
    assert log_ticks(KiB, TiB, base=1024) == fours(5, 20)
    thinned = log_ticks(KiB, TiB, max_ticks=5, base=1024)
    assert thinned == [float(4**k) for k in range(5, 21) if k % 5 in (0, 2, 4)]
    assert {KiB, MiB, GiB, TiB} <= set(thinned)
    assert len(log_ticks(1.0, 1024.0**40, max_ticks=3, base=1024)) <= 3


def test_other_bases() -> None:
    assert log_ticks(1.0, 1e9, base=1000) == [float(f"1e{k}") for k in range(10)]
    assert log_ticks(1.0, 2.0**20, base=2) == [2.0**k for k in range(0, 21, 3)]
    assert log_ticks(1.0, 100.0, base=3) == [1.0, 3.0, 9.0, 27.0, 81.0]
    assert log_ticks(2.0, 8.0, base=10) == log_ticks(2.0, 8.0) == [2.0, 5.0]


@pytest.mark.parametrize("base", [2, 3, 16, 1000, 1024])
@pytest.mark.parametrize("lo", [1e-9, 0.37, 1.0, 7.3, 1000.0, 1024.0, 1234.5])
@pytest.mark.parametrize("ratio", [1.001, 1.5, 2.0, 3.3, 9.9, 47.0, 1e4, 1e9, 1e30])
def test_log_ticks_of_any_base_give_two_ticks_inside_the_range(
    base: int, lo: float, ratio: float
) -> None:
    hi = lo * ratio
    ticks = log_ticks(lo, hi, base=base)
    assert len(ticks) >= 2
    assert ticks == sorted(set(ticks))
    assert all(lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9) for t in ticks)


@pytest.mark.parametrize("base", [1, 0, -10])
def test_log_ticks_refuse_a_base_below_two(base: int) -> None:
    with pytest.raises(ValueError, match="bad log tick base"):
        log_ticks(1.0, 10.0, base=base)


def test_render_with_base_1024_ticks_on_a_bytes_axis() -> None:
    sizes = fours(5, 15)
    series = [Series("a", tuple((x, 1e-5 + 1e-9 * x) for x in sizes))]
    seen: list[float] = []

    def fmt(value: float) -> str:
        seen.append(value)
        return format_bytes(value)

    def draw(x_tick_base: int = 10, y_tick_base: int = 10) -> bytes:
        return render(
            series,
            title="t",
            x_label="x",
            y_label="y",
            x_format=fmt,
            x_tick_base=x_tick_base,
            y_tick_base=y_tick_base,
        )

    data = draw(x_tick_base=1024)
    assert seen == fours(5, 15)
    assert draw(x_tick_base=1024) == data
    assert draw() == draw(x_tick_base=10, y_tick_base=10) != data
    image = Image.open(io.BytesIO(data))
    assert image.size == (1000, 620)
    assert PALETTE[0] in plot_area_colours(image)


def test_render_with_base_1024_on_both_axes_and_a_linear_one() -> None:
    series = [Series("a", ((KiB, KiB), (GiB, MiB)))]
    both = render(
        series, title="t", x_label="x", y_label="y", y_format=format_bytes, y_tick_base=1024
    )
    assert both.startswith(b"\x89PNG")
    linear = render(series, title="t", x_label="x", y_label="y", log_x=False, x_tick_base=1024)
    assert linear == render(series, title="t", x_label="x", y_label="y", log_x=False)


def test_render_refuses_a_tick_base_below_two() -> None:
    with pytest.raises(ValueError, match="x_tick_base"):
        render(SAMPLE, title="t", x_label="x", y_label="y", x_tick_base=1)
    with pytest.raises(ValueError, match="y_tick_base"):
        render(SAMPLE, title="t", x_label="x", y_label="y", y_tick_base=0)
