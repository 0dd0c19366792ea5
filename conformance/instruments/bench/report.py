"""``toolconf bench``'s outputs: JSON (every figure), Markdown (the tables), PNG (the plot).

The Markdown ends by setting the run's figures beside seed 000's claims:
about 18% of Reads are re-reads, a dedup stub of about 100 bytes against up
to 25K tokens of content, and a refusal of about 100 bytes where truncating
cost about 25K tokens.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

from conformance.instruments.bench import plot
from conformance.instruments.bench.measure import GATE_CAP, CapPoint, DedupPoint, ReplayTotals
from conformance.instruments.bench.run import BenchRun, ImplementationRun
from conformance.instruments.bench.trace import SEED_REREAD_SHARE

SEED_STUB_BYTES: Final = 100  # seed 000: "~100-byte stub"
TARGET_SIZE: Final = 100_000  # a dedup hit is judged against a full Read of 100 KB


def to_json(run: BenchRun) -> str:
    """Every figure of the run, times in seconds, sizes in bytes."""
    return json.dumps(dataclasses.asdict(run), indent=2, sort_keys=False) + "\n"


def to_png(run: BenchRun) -> bytes:
    """Median time per call against file size: full Read, dedup hit, over-cap refusal."""
    series: list[plot.Series] = []
    for impl in run.implementations:
        full = tuple((p.size, p.full_seconds) for p in impl.dedup)
        hits = tuple((p.size, p.hit_seconds) for p in impl.dedup if p.hit_seconds is not None)
        refusals = tuple((p.size, p.seconds) for p in impl.size_cap)
        if full:
            series.append(plot.Series(f"{impl.label}: full Read", full))
        if hits:
            series.append(plot.Series(f"{impl.label}: dedup hit", hits))
        if refusals:
            series.append(
                plot.Series(f"{impl.label}: whole Read over the size cap", refusals, dashed=True)
            )
    return plot.render(
        series,
        title="Read cost against file size (median round trip through protocol v1)",
        x_label="file size",
        y_label="time per call",
        x_tick_base=1024,
    )


def to_markdown(run: BenchRun) -> str:
    """The report a person reads: one table per measurement, then the seed's claims."""
    lines = [
        "# toolconf bench",
        "",
        _machine_line(run),
        "",
        f"Each time is the median of {run.rounds} round trips through protocol v1 "
        "(transport included), after 2 untimed ones.",
    ]
    for impl in run.implementations:
        if impl.failure:
            lines += ["", f"**{impl.label}** ({impl.spec}) could not be measured:", ""]
            lines += ["```", impl.failure, "```"]
    lines += _dedup_section(run.implementations)
    lines += _size_cap_section(run.implementations)
    lines += _gate_section(run.implementations)
    lines += _replay_section(run)
    lines += _claims_section(run)
    return "\n".join(lines) + "\n"


def _machine_line(run: BenchRun) -> str:
    m = run.machine
    load = m.get("load_average_1min")
    load_text = f", load {load:.2f} at start" if isinstance(load, float) else ""
    names = ", ".join(f"{impl.label} = {impl.name} (`{impl.spec}`)" for impl in run.implementations)
    return (
        f"Run {run.started} on {m['cpu']} ({m['cpus']} CPUs), {m['platform']}, "
        f"Python {m['python']}{load_text}. Implementations: {names}."
    )


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _time(seconds: float | None) -> str:
    return "n/a" if seconds is None else plot.format_seconds(seconds)


def _ratio(numerator: float | None, denominator: float | None) -> str:
    if numerator is None or not denominator:
        return "n/a"
    value = numerator / denominator
    return f"{value:.0f}×" if value >= 10 else f"{value:.2f}×"


def _dedup_section(impls: Sequence[ImplementationRun]) -> list[str]:
    rows: list[list[str]] = []
    for impl in impls:
        for p in impl.dedup:
            rows.append(
                [
                    plot.format_bytes(p.size),
                    impl.label,
                    _time(p.full_seconds),
                    _time(p.hit_seconds),
                    _ratio(p.full_seconds, p.hit_seconds),
                    _ratio(p.hit_seconds, impl.floor_seconds),
                    f"{p.full_tokens:,}",
                    "n/a" if p.stub_bytes is None else f"{p.stub_bytes} B / {p.stub_tokens}",
                ]
            )
    if not rows:
        return []
    floors = ", ".join(
        f"{impl.label} {_time(impl.floor_seconds)}"
        for impl in impls
        if impl.floor_seconds is not None
    )
    return [
        "",
        "## Dedup: a full Read against a hit",
        "",
        "Full Reads run with dedup off (`readDedupKillswitch`), a hit repeats the first "
        "Read of the same range. The floor is a Read of a missing file: one round trip "
        f"and one failed stat ({floors}).",
        "",
        *_table(
            [
                "size",
                "implementation",
                "full Read",
                "dedup hit",
                "full ÷ hit",
                "hit ÷ floor",
                "full tokens",
                "stub bytes / tokens",
            ],
            rows,
        ),
    ]


def _size_cap_section(impls: Sequence[ImplementationRun]) -> list[str]:
    measured = [impl for impl in impls if impl.size_cap]
    notes = [f"{impl.label}: {impl.size_cap_note}" for impl in impls if impl.size_cap_note]
    if not measured and not notes:
        return []
    sizes = sorted({p.size for impl in measured for p in impl.size_cap})
    rows = []
    for impl in measured:
        by_size = {p.size: p for p in impl.size_cap}
        rows.append(
            [
                impl.label,
                *(_time(by_size[s].seconds) if s in by_size else "n/a" for s in sizes),
                _spread(impl.size_cap),
                ", ".join(sorted({str(p.error_name) for p in impl.size_cap})),
            ]
        )
    header = [
        "implementation",
        *(plot.format_bytes(s) for s in sizes),
        "largest ÷ smallest",
        "error",
    ]
    return [
        "",
        "## Over-cap refusal against file size (READ-SIZE-1)",
        "",
        "Whole-file Reads of sparse files over the 256 KiB cap: `stat` alone decides, "
        "so the cost should not grow with the size.",
        "",
        *_table(header, rows),
        *(["", *notes] if notes else []),
    ]


def _spread(points: Sequence[CapPoint]) -> str:
    ordered = sorted(points, key=lambda p: p.size)
    return _ratio(ordered[-1].seconds, ordered[0].seconds) if ordered else "n/a"


def _gate_section(impls: Sequence[ImplementationRun]) -> list[str]:
    rows: list[list[str]] = []
    for impl in impls:
        for p in impl.gate:
            outcome = "returned" if p.stage == "done" else f"{p.stage}: {p.error_name}"
            rows.append(
                [
                    p.kind,
                    plot.format_bytes(p.size),
                    impl.label,
                    _time(p.seconds),
                    outcome,
                    f"{p.result_bytes:,} B / {p.result_tokens:,}",
                    f"{p.text_tokens:,}",
                ]
            )
    if not rows:
        return []
    return [
        "",
        f"## The token gate (TOK-GATE-1/2, cap {GATE_CAP:,})",
        "",
        "Whole Reads of each corpus kind with dedup off. The answer is what the model "
        "receives; the text's tokens are the file's own, counted by the bench.",
        "",
        *_table(
            ["kind", "size", "implementation", "time", "outcome", "answer", "text tokens"],
            rows,
        ),
    ]


def _saved(on: ReplayTotals, off: ReplayTotals, what: str) -> float:
    total = getattr(off, what)
    return (total - getattr(on, what)) / total if total else 0.0


def _replay_section(run: BenchRun) -> list[str]:
    t = run.trace
    rows: list[list[str]] = []
    for impl in run.implementations:
        if impl.replay_on is None or impl.replay_off is None:
            continue
        for totals in (impl.replay_off, impl.replay_on):
            rows.append(
                [
                    impl.label,
                    "on" if totals.dedup else "off",
                    str(totals.reads),
                    str(totals.stubs),
                    f"{totals.failed_reads} / {totals.failed_edits}",
                    f"{totals.bytes:,}",
                    f"{totals.tokens:,}",
                    _time(totals.seconds),
                    _time(totals.seconds_by_kind.get("reread", 0.0)),
                ]
            )
        on, off = impl.replay_on, impl.replay_off
        rows.append(
            [
                impl.label,
                "**saved**",
                "",
                "",
                "",
                f"{_saved(on, off, 'bytes'):.1%}",
                f"{_saved(on, off, 'tokens'):.1%}",
                "—",  # run-to-run noise in the whole replay exceeds the saving
                _time(
                    off.seconds_by_kind.get("reread", 0.0) - on.seconds_by_kind.get("reread", 0.0)
                ),
            ]
        )
    if not rows:
        return []
    return [
        "",
        "## Trace replay: dedup on and off",
        "",
        f"{t.reads} Reads and {t.edits} Edits over {t.files} files ({t.tree_bytes:,} bytes) "
        f"of this project's own sources, seed {t.seed}: {t.rereads} re-reads "
        f"({t.rereads / t.reads:.1%}). Of those, {t.rereads_unchanged} find the file unchanged "
        f"and its latest record a Read of the same range (dedup's stub), "
        f"{t.rereads_other_range} come after a Read of another range of the file (the state "
        f"keeps one record per path), and {t.rereads_after_edit} come right after an Edit. "
        "Failed Reads are those the gates refused. Time is the calls' own, all of them, then "
        f"the {t.rereads_unchanged} unchanged re-reads' alone. What dedup saves in time is "
        "read from the second: the whole replay's time varies from run to run by more "
        "than that (a few percent), so no saving is computed from it.",
        "",
        *_table(
            [
                "implementation",
                "dedup",
                "Reads",
                "stubs",
                "failed Reads / Edits",
                "bytes returned",
                "tokens returned",
                "time",
                "time on unchanged re-reads",
            ],
            rows,
        ),
    ]


def _claims_section(run: BenchRun) -> list[str]:
    t = run.trace
    lines = [
        "",
        "## Against seed 000's claims",
        "",
        f"- *About {SEED_REREAD_SHARE:.0%} of Reads are re-reads.* The trace is built to "
        f"that share: {t.rereads} of {t.reads} ({t.rereads / t.reads:.1%}).",
    ]
    for impl in run.implementations:
        lines += [f"- **{impl.label}**:"]
        lines += [f"  - {claim}" for claim in _claims_of(impl)]
    return lines


def _claims_of(impl: ImplementationRun) -> list[str]:
    claims: list[str] = []
    on, off = impl.replay_on, impl.replay_off
    if on is not None and off is not None:
        claims.append(
            f"*a dedup hit rate of about {SEED_REREAD_SHARE:.0%}*: {on.stubs} stubs for "
            f"{on.reads} Reads ({on.stubs / on.reads:.1%}); the other re-reads followed an Edit "
            "or a Read of another range, and got the content"
        )
        on_time = on.seconds_by_kind.get("reread", 0.0)
        off_time = off.seconds_by_kind.get("reread", 0.0)
        claims.append(
            f"dedup saved {_saved(on, off, 'tokens'):.1%} of the tokens the trace returned "
            f"({off.tokens:,} → {on.tokens:,}), and {_time(off_time - on_time)} on the "
            f"re-reads it answered ({_time(off_time)} → {_time(on_time)})"
        )
    stubs = [p for p in impl.dedup if p.stub_bytes is not None]
    if stubs:
        largest = max(impl.dedup, key=lambda p: p.full_tokens)
        claims.append(
            f"*a stub of about {SEED_STUB_BYTES} bytes*: {stubs[0].stub_bytes} bytes "
            f"({stubs[0].stub_tokens} tokens), where the {plot.format_bytes(largest.size)} "
            f"file's full Read returned {largest.full_tokens:,} tokens"
        )
    elif impl.dedup:
        claims.append("no dedup stub: every repeated Read returned the content")
    refusals = [p for p in impl.gate if p.error_name == "MaxFileReadTokenExceededError"]
    if refusals:
        sizes = sorted({p.result_bytes for p in refusals})
        claims.append(
            f"*a refusal of about 100 bytes where truncating cost about 25K tokens*: "
            f"{len(refusals)} over-cap Reads answered in {sizes[0]}–{sizes[-1]} bytes "
            f"(a truncation would have returned {GATE_CAP:,} tokens each)"
        )
    hit = _at(impl.dedup, TARGET_SIZE)
    if hit is not None and hit.hit_seconds is not None:
        claims.append(
            f"a hit is {_ratio(hit.full_seconds, hit.hit_seconds)} cheaper than a full Read "
            f"of {plot.format_bytes(hit.size)} through the protocol"
        )
    return claims


def _at(points: Sequence[DedupPoint], size: int) -> DedupPoint | None:
    return next((p for p in points if p.size == size), None)


def summary(run: BenchRun) -> dict[str, Any]:
    """The headline ratios per implementation, as numbers, for a program reading a run."""
    out: dict[str, Any] = {}
    for impl in run.implementations:
        hit = _at(impl.dedup, TARGET_SIZE)
        out[impl.label] = {
            "failure": impl.failure,
            "full_over_hit_100KB": None
            if hit is None or hit.hit_seconds is None
            else hit.full_seconds / hit.hit_seconds,
            "size_cap_spread": None
            if not impl.size_cap
            else max(impl.size_cap, key=lambda p: p.size).seconds
            / min(impl.size_cap, key=lambda p: p.size).seconds,
            "tokens_saved": None
            if impl.replay_on is None or impl.replay_off is None
            else _saved(impl.replay_on, impl.replay_off, "tokens"),
        }
    return out
