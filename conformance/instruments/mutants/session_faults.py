"""Session faults: mutants that break one engine's session or tool pool.

Each runs after every ``begin`` on its own :class:`MutantEngine` and changes
nothing global: it swaps the session's read-file state for a subclass that
remembers wrongly, overrides a knob the session computed from env and
settings, or rebuilds a tool of the pool around a wrapper. So they run
in-process. A survivor is a hole in the scenarios: add the scenario, never
weaken the mutant.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from typing import Any, cast

from pydantic import BaseModel

from conformance.instruments.mutants.base import MutantEngine, session_fault, wrap_tool
from reference import errors, fileio, text
from reference.events import EventLog
from reference.filestate import ReadFileState, ReadRecord
from reference.session import DEFAULT_MAX_READ_TOKENS, MAX_READ_TOKENS_ENV
from reference.settings import Settings, positive_int
from reference.tool import CallFn, ToolResult, ToolUseContext, ValidateFn
from reference.tools import write
from reference.tools.common import current_text
from reference.tools.read import tool as read

# -- the read-file state ----------------------------------------------------------


class _EveryFileSeen(ReadFileState):
    """A file without a record counts as read in full just now.

    The made-up record carries the file's current mtime, so staleness never
    compares its text and a stat is all it costs (Read asks too, for dedup).
    """

    def get(self, path: str) -> ReadRecord | None:
        record = super().get(path)
        st = fileio.stat(path)
        if record is not None or st.kind is not fileio.FileKind.REGULAR:
            return record
        return ReadRecord(
            text="",
            mtime_ns=st.mtime_ns,
            size=st.size,
            offset=None,
            limit=None,
            partial=False,
            source="write",
        )


@session_fault(
    "no-read-before-write",
    "Write and Edit accept an existing file that was never read",
    breaks=("WRITE-READ-1", "EDIT-READ-1", "WRITE-VALIDATE-1", "EDIT-VALIDATE-1"),
)
def _no_read_before_write(engine: MutantEngine) -> None:
    engine.live_session.read_state = _EveryFileSeen()


class _PartialForgotten(ReadFileState):
    def set(self, path: str, record: ReadRecord) -> None:
        super().set(path, dataclasses.replace(record, partial=False))


@session_fault(
    "partial-read-accepted-for-write",
    "Every Read is recorded as full, so Write accepts a file read only in part",
    breaks=("WRITE-READ-1", "STATE-PARTIAL-1"),
)
def _partial_read_accepted(engine: MutantEngine) -> None:
    engine.live_session.read_state = _PartialForgotten()


class _CountAsReads(ReadFileState):
    """Records of the given sources are stored as a Read of the default range."""

    def __init__(self, *sources: str) -> None:
        super().__init__()
        self.sources = sources

    def set(self, path: str, record: ReadRecord) -> None:
        if record.source in self.sources:
            record = dataclasses.replace(record, source="read", offset=1, limit=read.DEFAULT_LIMIT)
        super().set(path, record)


@session_fault(
    "dedup-after-write",
    "Read answers the unchanged-file stub after a Write or Edit too",
    breaks=("READ-DEDUP-3",),
)
def _dedup_after_write(engine: MutantEngine) -> None:
    engine.live_session.read_state = _CountAsReads("write", "edit")


@session_fault(
    "dedup-after-edit",
    "Read answers the unchanged-file stub after an Edit (not after a Write)",
    breaks=("READ-DEDUP-3",),
)
def _dedup_after_edit(engine: MutantEngine) -> None:
    engine.live_session.read_state = _CountAsReads("edit")


@session_fault(
    "state-shared-across-sessions",
    "One read-file state serves every session of the engine",
    breaks=("STATE-SESSION-1",),
)
def _state_shared(engine: MutantEngine) -> None:
    engine.live_session.read_state = engine.carried.setdefault("read_state", ReadFileState())


@session_fault(
    "dedup-killswitch-ignored",
    "readDedupKillswitch is ignored: unchanged re-reads still get the stub",
    breaks=("READ-DEDUP-4",),
)
def _killswitch_ignored(engine: MutantEngine) -> None:
    engine.live_session.dedup_enabled = True


@session_fault(
    "env-cap-ignored",
    "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS is ignored; settings or 25,000 decide",
    breaks=("TOK-CAP-1",),
)
def _env_cap_ignored(engine: MutantEngine) -> None:
    session = engine.live_session
    configured = positive_int(session.settings.scalar("fileReadMaxOutputTokens"))
    session.max_read_tokens = configured or DEFAULT_MAX_READ_TOKENS


@session_fault(
    "settings-cap-needs-json-number",
    "fileReadMaxOutputTokens given as a string of digits is ignored",
    breaks=("TOK-CAP-1",),
)
def _settings_cap_needs_json_number(engine: MutantEngine) -> None:
    session = engine.live_session
    configured = session.settings.scalar("fileReadMaxOutputTokens")
    if isinstance(configured, str) and positive_int(session.env.get(MAX_READ_TOKENS_ENV)) is None:
        session.max_read_tokens = DEFAULT_MAX_READ_TOKENS


@session_fault(
    "deny-rule-ignored",
    "Path deny rules are never consulted by Read, Write or Edit",
    breaks=("READ-VALIDATE-1", "WRITE-VALIDATE-1", "EDIT-VALIDATE-1"),
)
def _deny_rule_ignored(engine: MutantEngine) -> None:
    session = engine.live_session
    session.settings = Settings(
        {
            source: {**values, "permissions": {**(values.get("permissions") or {}), "deny": []}}
            for source, values in session.settings.by_source.items()
        }
    )


@session_fault(
    "error-code-swapped",
    "Write reports FileNotReadError as code 3 and FileModifiedSinceReadError as code 2",
    breaks=("WRITE-VALIDATE-1", "ERR-CODE-1"),
)
def _error_code_swapped(engine: MutantEngine) -> None:
    not_read, modified = errors.FileNotReadError, errors.FileModifiedSinceReadError
    wrap_tool(
        engine,
        "Write",
        "error_codes",
        lambda codes: {**codes, not_read: codes[modified], modified: codes[not_read]},
    )


def _on_input(change: Callable[[Any], Any]) -> Callable[[CallFn], CallFn]:
    """A call() wrapper that hands the tool a changed input."""
    return lambda call: lambda inp, ctx: call(change(inp), ctx)


def _on_context(
    change: Callable[[ToolUseContext], ToolUseContext],
) -> Callable[[CallFn], CallFn]:
    """A call() wrapper that hands the tool a changed context."""
    return lambda call: lambda inp, ctx: call(inp, change(ctx))


@session_fault(
    "no-size-gate",
    "Read has no 256 KiB size gate: a big file read whole goes on to the token gate",
    breaks=("READ-SIZE-1",),
)
def _no_size_gate(engine: MutantEngine) -> None:
    # A limit of 2000 shows the same lines as none (READ-RANGE-2), and a limit lifts the gate.
    bounded = _on_input(lambda i: i.model_copy(update={"limit": i.limit or 2000}))
    wrap_tool(engine, "Read", "call", bounded)


@session_fault(
    "off-by-one-offset",
    "Read takes offset as 0-based: the view starts one line after the one asked for",
    breaks=("READ-RANGE-1",),
)
def _off_by_one_offset(engine: MutantEngine) -> None:
    shift = _on_input(lambda i: i.model_copy(update={"offset": i.offset + 1}) if i.offset else i)
    wrap_tool(engine, "Read", "call", shift)


def _fit_to_cap(call: CallFn) -> CallFn:
    def fitted(inp: read.ReadInput, ctx: ToolUseContext) -> ToolResult:
        limit = inp.limit or read.DEFAULT_LIMIT
        while True:
            try:
                return call(inp, ctx)
            except errors.MaxFileReadTokenExceededError:
                if limit == 1:
                    raise
                limit //= 2
                inp = inp.model_copy(update={"limit": limit})

    return fitted


@session_fault(
    "truncate-instead-of-throw",
    "Over the token cap, Read halves its limit until the view fits instead of raising",
    breaks=("TOK-GATE-2", "READ-TOKENS-1"),
)
def _truncate_instead_of_throw(engine: MutantEngine) -> None:
    wrap_tool(engine, "Read", "call", _fit_to_cap)


def _inherit_crlf(call: CallFn) -> CallFn:
    def inheriting(inp: write.WriteInput, ctx: ToolUseContext) -> ToolResult:
        path = ctx.expand(inp.file_path)
        if os.path.isfile(path) and text.is_crlf(current_text(path)):
            inp = inp.model_copy(update={"content": text.to_crlf(text.to_lf(inp.content))})
        return call(inp, ctx)

    return inheriting


@session_fault(
    "lf-policy-broken",
    "Write gives content the CRLF line endings of the file it replaces",
    breaks=("WRITE-EOL-1",),
)
def _lf_policy_broken(engine: MutantEngine) -> None:
    wrap_tool(engine, "Write", "call", _inherit_crlf)


@session_fault(
    "no-file-changed-event",
    "Write and Edit change files without reporting file_changed",
    breaks=("WRITE-NOTIFY-1", "EDIT-NOTIFY-1"),
)
def _no_file_changed_event(engine: MutantEngine) -> None:
    silenced = _on_context(lambda ctx: dataclasses.replace(ctx, events=EventLog()))
    for tool in ("Write", "Edit"):
        wrap_tool(engine, tool, "call", silenced)


@functools.cache
def _lenient(model: type[BaseModel]) -> type[BaseModel]:
    config = {**model.model_config, "extra": "ignore"}
    return cast(type[BaseModel], type(model.__name__, (model,), {"model_config": config}))


@session_fault(
    "extra-input-fields-accepted",
    'Tool inputs are parsed with extra="ignore": unknown fields are dropped, not refused',
    breaks=("DISP-SCHEMA-1", "DISP-SCHEMA-2"),
)
def _extra_fields_accepted(engine: MutantEngine) -> None:
    for tool in [t.name for t in engine.tools]:
        wrap_tool(engine, tool, "input_model", _lenient)


class _OwnWritesForgotten(ReadFileState):
    def set(self, path: str, record: ReadRecord) -> None:
        if record.source == "read":
            super().set(path, record)


@session_fault(
    "own-writes-not-recorded",
    "Write and Edit leave the read-file state as it was before they wrote",
    breaks=("STATE-UPDATE-1", "WRITE-STATE-1", "EDIT-STATE-1"),
)
def _own_writes_not_recorded(engine: MutantEngine) -> None:
    engine.live_session.read_state = _OwnWritesForgotten()


def _reread_when_stale(validate: ValidateFn) -> ValidateFn:
    def rereading(inp: Any, ctx: ToolUseContext) -> None:
        try:
            validate(inp, ctx)
        except errors.FileModifiedSinceReadError:
            path = ctx.expand(inp.file_path)
            st = fileio.stat(path)
            record = ReadRecord(
                text=current_text(path),
                mtime_ns=st.mtime_ns,
                size=st.size,
                offset=1,
                limit=read.DEFAULT_LIMIT,
                partial=False,
                source="read",
            )
            ctx.session.read_state.set(path, record)  # as if the model had read it again
            raise

    return rereading


@session_fault(
    "stale-refusal-refreshes-record",
    "A Write or Edit refused as stale re-reads the file, so a retry goes through",
    breaks=("STATE-UPDATE-2",),
)
def _stale_refusal_refreshes_record(engine: MutantEngine) -> None:
    for tool in ("Write", "Edit"):
        wrap_tool(engine, tool, "validate_input", _reread_when_stale)


def _empty_notice_of_its_own(map_result: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def mapped(data: dict[str, Any]) -> Any:
        file = data.get("file") or {}
        if data["type"] == "text" and file["totalLines"] == 1 and file["content"] == "":
            return (
                "<system-reminder>Warning: the file exists but its contents are empty."
                "</system-reminder>"
            )
        return map_result(data)

    return mapped


@session_fault(
    "empty-file-notice-of-its-own",
    "An empty file gets an empty-file notice of its own, not the offset notice of its one line",
    breaks=("READ-EMPTY-1",),
)
def _empty_file_notice_of_its_own(engine: MutantEngine) -> None:
    wrap_tool(engine, "Read", "map_result", _empty_notice_of_its_own)
