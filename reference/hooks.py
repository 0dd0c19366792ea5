"""Hooks: the users' commands that see each tool call before and after it runs (SPEC.md 5).

This module finds the command handlers the settings give an event and a tool
(HOOK-CONFIG-1, HOOK-MATCH-1, HOOK-DEDUP-1), runs them as real subprocesses,
all at once (HOOK-RUN-1, HOOK-INPUT-1, HOOK-PARALLEL-1, HOOK-TIMEOUT-1),
reads what they said (HOOK-EXIT-1, HOOK-JSON-1), combines it per event
(HOOK-DECISION-1, HOOK-BLOCK-1, HOOK-UPDATE-1, HOOK-POST-1, HOOK-CONTINUE-1)
and reports every run as a ``hook`` event (HOOK-EVENT-1).

It decides nothing about the call itself: the dispatch pipeline turns a
:class:`PreToolUseResult` into a block, a permission input or a replaced input
(DISP-PREHOOK-1, PERM-ORDER-1) and appends :func:`context_blocks` to results
(HOOK-CONTEXT-1).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Final, Literal

from reference.hook_matcher import matcher_matches
from reference.profiles import DOCUMENTED
from reference.session import Session
from reference.settings import SOURCES, Settings
from reference.tool import ToolUseContext

PRE_TOOL_USE: Final = "PreToolUse"
POST_TOOL_USE: Final = "PostToolUse"
POST_TOOL_USE_FAILURE: Final = "PostToolUseFailure"

DEFAULT_TIMEOUT_S: Final = 600.0  # HOOK-TIMEOUT-1
# Longer timeouts are cut to this (23 days): the OS waits overflow far beyond it.
MAX_TIMEOUT_S: Final = 2_000_000.0
SHELL: Final = "/bin/sh"  # HOOK-RUN-1
BLOCK_PREFIX: Final = "Blocked by PreToolUse hook"  # HOOK-BLOCK-1
STOPPED_REASON: Final = "the hook stopped execution"  # HOOK-CONTINUE-1
_END: Final = "</system-reminder>"
# After a kill (or a clean exit whose pipes a detached grandchild keeps open),
# how long to wait for the pipes to drain before closing them ourselves.
_DRAIN_S: Final = 5.0

Decision = Literal["allow", "ask", "deny"]
_RANK: Final[Mapping[str, int]] = {"allow": 1, "ask": 2, "deny": 3}  # HOOK-DECISION-1
_PRE_DECISIONS: Final[Mapping[str, Decision]] = {"allow": "allow", "ask": "ask", "deny": "deny"}
_DEPRECATED: Final[Mapping[str, Decision]] = {"approve": "allow", "block": "deny"}


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True, slots=True)
class Handler:
    """One ``command`` handler as configured (HOOK-CONFIG-1)."""

    command: str
    timeout: float = DEFAULT_TIMEOUT_S


def handler_timeout(value: object) -> float:
    """HOOK-TIMEOUT-1: a positive, finite number of seconds; anything else is 600.

    A larger value than :data:`MAX_TIMEOUT_S` is cut to it.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return DEFAULT_TIMEOUT_S
    if isinstance(value, float) and not math.isfinite(value):
        return DEFAULT_TIMEOUT_S
    return float(min(value, MAX_TIMEOUT_S))


def matching_handlers(
    settings: Settings, event: str, tool_name: str, *, spaced_lists: bool = True
) -> list[Handler]:
    """The handlers ``event`` runs for ``tool_name``, in configuration order, deduplicated.

    HOOK-CONFIG-1: sources in PERM-SOURCE-1 order, then groups, then handlers;
    only ``command`` handlers with a string ``command``; anything malformed is
    skipped. HOOK-DEDUP-1: a command string runs once, with its first timeout.
    ``spaced_lists``: whether a list matcher may hold spaces and commas (HOOK-MATCH-1).
    """
    return list(
        settings.memo(
            ("hooks", event, tool_name, spaced_lists),
            lambda: _collect(settings, event, tool_name, spaced_lists),
        )
    )


def _collect(settings: Settings, event: str, tool_name: str, spaced_lists: bool) -> list[Handler]:
    found: list[Handler] = []
    seen: set[str] = set()
    for source in SOURCES:
        config = settings.by_source.get(source)
        hooks = config.get("hooks") if isinstance(config, Mapping) else None
        groups = hooks.get(event) if isinstance(hooks, Mapping) else None
        if not isinstance(groups, list | tuple):
            continue
        for group in groups:
            if not isinstance(group, Mapping):
                continue
            matcher = group.get("matcher")
            if not matcher_matches(matcher, tool_name, spaced_lists=spaced_lists):  # HOOK-MATCH-1
                continue
            handlers = group.get("hooks")
            if not isinstance(handlers, list | tuple):
                continue
            for handler in handlers:
                if not isinstance(handler, Mapping) or handler.get("type") != "command":
                    continue  # HOOK-CONFIG-1: other handler types are ignored
                command = handler.get("command")
                if not isinstance(command, str) or command in seen:
                    continue  # HOOK-DEDUP-1
                seen.add(command)
                found.append(Handler(command, handler_timeout(handler.get("timeout"))))
    return found


# --------------------------------------------------------------------------- running


@dataclass(frozen=True, slots=True, kw_only=True)
class HookRun:
    """What one handler did. ``exit_code`` is None when it did not exit by itself
    (killed at its timeout, died by a signal, or could not be started)."""

    command: str
    exit_code: int | None
    timed_out: bool
    stdout: str = ""
    stderr: str = ""
    ended: float = 0.0
    """When the run ended (``time.monotonic``), for a profile whose release lets the last
    hook to end decide (HOOK-UPDATE-1)."""

    @property
    def blocking(self) -> bool:
        """HOOK-EXIT-1: exit code 2 is the blocking error."""
        return self.exit_code == 2

    def output_json(self) -> Mapping[str, Any] | None:
        """The JSON object the handler printed, when it is to be honoured (HOOK-JSON-1).

        Exit 2's stdout is ignored (HOOK-EXIT-1) and so is a timed-out
        handler's (HOOK-TIMEOUT-1: it never blocks); every other end,
        non-blocking errors included, is honoured.
        """
        if self.timed_out or self.blocking or not self.stdout.lstrip().startswith("{"):
            return None
        try:
            data = json.loads(self.stdout)
        except ValueError:  # HOOK-JSON-1: not valid JSON is plain text, ignored
            return None
        return data if isinstance(data, dict) else None


def hook_environment(session: Session) -> dict[str, str]:
    """HOOK-RUN-1: the process environment, then the session's, then the project dir and home."""
    env = dict(os.environ)
    env.update(session.env)
    env["CLAUDE_PROJECT_DIR"] = session.root
    env["HOME"] = session.home
    return env


def hook_input(
    ctx: ToolUseContext,
    *,
    event: str,
    tool_name: str,
    tool_input: Any,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """HOOK-INPUT-1: the JSON object every handler reads on its standard input.

    ``cwd`` and ``tool_use_id`` are the call's (``ctx``); the session's id,
    transcript and current permission mode come from its session.
    """
    session = ctx.session
    return {
        "session_id": session.session_id,
        "transcript_path": os.path.join(session.session_dir, "transcript.jsonl"),
        "cwd": ctx.cwd,
        "permission_mode": session.permission_mode,  # PERM-MODE-1 names
        "hook_event_name": event,
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": ctx.tool_use_id,
        **(extra or {}),
    }


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _close(*streams: IO[bytes] | None) -> None:
    for stream in streams:
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def run_handler(handler: Handler, *, stdin: bytes, cwd: str, env: Mapping[str, str]) -> HookRun:
    """HOOK-RUN-1: ``/bin/sh -c COMMAND`` in its own process group, input then EOF.

    The handler has ended when it exited and closed its standard output and
    error. At its timeout its process group is killed (HOOK-TIMEOUT-1). No
    wait is unbounded: pipes a detached grandchild keeps open are closed
    after a short drain.
    """
    try:
        process = subprocess.Popen(
            [SHELL, "-c", handler.command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:  # no such cwd, no shell: a non-blocking error
        return HookRun(command=handler.command, exit_code=None, timed_out=False, stderr=str(exc))
    timed_out = False
    try:
        out, err = process.communicate(stdin, timeout=handler.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process)  # HOOK-TIMEOUT-1
        try:
            out, err = process.communicate(timeout=_DRAIN_S)
        except subprocess.TimeoutExpired as exc:
            out, err = exc.stdout or b"", exc.stderr or b""
            _close(process.stdout, process.stderr)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_DRAIN_S)
    finally:
        if process.returncode is None:  # an unexpected error above: never leave it running
            _kill_group(process)
            _close(process.stdin, process.stdout, process.stderr)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_DRAIN_S)
    code = process.returncode
    return HookRun(
        command=handler.command,
        exit_code=None if timed_out or code is None or code < 0 else code,
        timed_out=timed_out,
        stdout=_decode(out if isinstance(out, bytes) else None),
        stderr=_decode(err if isinstance(err, bytes) else None),
        ended=time.monotonic(),
    )


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def hook_stdin(payload: Mapping[str, Any]) -> bytes:
    """HOOK-INPUT-2: the JSON input as the bytes a handler reads: valid UTF-8, always.

    Non-ASCII text is written as itself; a lone surrogate (which UTF-8 cannot
    hold: an id or input the request sent as a ``\\ud800`` escape) as its
    JSON ``\\u`` escape, so the string reaches the handler unchanged. In
    ``ensure_ascii=False`` output such a code point occurs only inside a
    string literal, where the escape means the same code point.
    """
    text = json.dumps(payload, ensure_ascii=False, default=str)
    escaped = _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return escaped.encode("utf-8")


def run_event(
    ctx: ToolUseContext,
    *,
    event: str,
    tool_name: str,
    tool_input: Any,
    extra: Mapping[str, Any] | None = None,
) -> list[HookRun]:
    """Run every handler ``event`` has for this call, together; their runs in configuration order.

    The handlers run in the call's ``cwd`` with its session's settings and
    environment. HOOK-PARALLEL-1: they run concurrently and this returns once
    all ended. HOOK-EVENT-1: one ``hook`` event per run on the context's
    ``events``, emitted in configuration order after the last one ended.
    """
    session = ctx.session
    handlers = matching_handlers(
        session.settings, event, tool_name, spaced_lists=session.profile.hook_spaced_lists
    )
    if not handlers:
        return []
    where = ctx.cwd
    payload = hook_input(ctx, event=event, tool_name=tool_name, tool_input=tool_input, extra=extra)
    stdin = hook_stdin(payload)
    env = hook_environment(session)
    runs: list[HookRun | None] = [None] * len(handlers)

    def work(index: int) -> None:
        try:
            runs[index] = run_handler(handlers[index], stdin=stdin, cwd=where, env=env)
        except Exception as exc:  # never lose a run: an engine fault is a non-blocking error
            runs[index] = HookRun(
                command=handlers[index].command, exit_code=None, timed_out=False, stderr=repr(exc)
            )

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(1, len(runs))]
    for thread in threads:
        thread.start()
    work(0)
    for thread in threads:
        thread.join()
    done = [
        run
        if run is not None
        else HookRun(command=handler.command, exit_code=None, timed_out=False)
        for run, handler in zip(runs, handlers, strict=True)
    ]
    for run in done:  # HOOK-EVENT-1
        ctx.events.emit(
            "hook",
            event=event,
            id=ctx.tool_use_id,
            command=run.command,
            exit_code=run.exit_code,
            timed_out=run.timed_out,
        )
    return done


# --------------------------------------------------------------------------- interpretation


@dataclass(frozen=True, slots=True)
class HookText:
    """One text for the model (HOOK-CONTEXT-1): ``kind`` is ``additional context`` or
    ``feedback``."""

    kind: Literal["additional context", "feedback"]
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PreToolUseResult:
    """What the PreToolUse hooks of one call decided.

    ``decision`` is the combined decision (deny over ask over allow), None when
    no hook gave one. A ``deny`` blocks the call with ``block_reason`` as its
    whole content (HOOK-BLOCK-1); ``ask`` and ``allow`` feed PERM-ORDER-1
    steps 5 and 9. ``updated_input`` is the replacement input (HOOK-UPDATE-1),
    never set alongside a ``deny``. ``texts`` are the hooks' additional
    contexts in configuration order (HOOK-CONTEXT-1).
    """

    decision: Decision | None = None
    block_reason: str | None = None
    updated_input: dict[str, Any] | None = None
    texts: list[HookText] = field(default_factory=list)
    prevent_continuation: bool = False
    stop_reason: str | None = None

    @property
    def blocked(self) -> bool:
        return self.decision == "deny"


@dataclass(frozen=True, slots=True, kw_only=True)
class PostToolUseResult:
    """What the PostToolUse or PostToolUseFailure hooks of one call said.

    ``texts`` keeps the additional contexts and the feedback interleaved in
    configuration order, as HOOK-CONTEXT-1 appends them. ``updated_mcp_output``
    is the first ``updatedMCPToolOutput`` given (PostToolUse only); the
    pipeline applies it to MCP tools only (HOOK-POST-1).
    """

    texts: list[HookText] = field(default_factory=list)
    prevent_continuation: bool = False
    stop_reason: str | None = None
    updated_mcp_output: Any = None


def _text(value: object) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def _specific(data: Mapping[str, Any] | None, event: str) -> Mapping[str, Any]:
    """HOOK-JSON-1: ``hookSpecificOutput`` when its ``hookEventName`` is ``event``, else empty."""
    specific = data.get("hookSpecificOutput") if data is not None else None
    if isinstance(specific, Mapping) and specific.get("hookEventName") == event:
        return specific
    return {}


def _stop(data: Mapping[str, Any] | None) -> tuple[bool, str | None]:
    """HOOK-CONTINUE-1: (whether ``continue: false``, its ``stopReason``)."""
    if data is None or data.get("continue") is not False:
        return False, None
    reason = data.get("stopReason")
    return True, reason if isinstance(reason, str) else None


Render = Callable[..., str]
"""A profile's ``text(key, **fields)`` (``reference.profiles.Profile.text``)."""


def _pre_decision(
    run: HookRun,
    data: Mapping[str, Any] | None,
    specific: Mapping[str, Any],
    *,
    block_wins: bool = False,
) -> tuple[Decision | None, str | None]:
    """HOOK-DECISION-1: one PreToolUse handler's decision and, for a deny, its reason.

    With ``block_wins`` (the session's profile), the deprecated ``decision: block``
    denies whatever ``permissionDecision`` says."""
    if run.blocking:  # HOOK-EXIT-1: exit 2 denies, stderr is the reason (HOOK-BLOCK-1)
        return "deny", _text(run.stderr.strip())
    if data is None:
        return None, None
    if _stop(data)[0]:  # HOOK-CONTINUE-1: blocks whatever the hook decided
        return "deny", STOPPED_REASON
    decision = specific.get("permissionDecision")
    if block_wins and data.get("decision") == "block":  # HOOK-DECISION-1, the profile's
        return "deny", _text(data.get("reason"))
    if isinstance(decision, str) and decision in _PRE_DECISIONS:
        reason = _text(specific.get("permissionDecisionReason")) or _text(data.get("reason"))
        return _PRE_DECISIONS[decision], reason
    deprecated = data.get("decision")
    if isinstance(deprecated, str) and deprecated in _DEPRECATED:
        return _DEPRECATED[deprecated], _text(data.get("reason"))
    return None, None


def _denial(run: HookRun, reason: str | None, tool: str, text: Render) -> str:
    """HOOK-BLOCK-1: what one denying hook says, as the profile renders it (maybe nothing)."""
    if run.blocking:
        if reason is None:
            return text("hook_denial_exit2_bare", tool=tool, command=run.command)
        return text("hook_denial_exit2", tool=tool, command=run.command, stderr=reason)
    if reason is None:
        return text("hook_denial_bare", tool=tool)
    return text("hook_denial", tool=tool, reason=reason)


def interpret_pre_tool_use(
    runs: Sequence[HookRun],
    *,
    updates: str = "with-allow-or-ask",
    tool: str = "",
    text: Render = DOCUMENTED.text,
    block_wins: bool = False,
) -> PreToolUseResult:
    """Combine the runs of one call's PreToolUse handlers, given in configuration order.

    ``updates`` is the session profile's HOOK-UPDATE-1: which hooks' ``updatedInput``
    counts (those that allow or ask, every hook's, or only the hook that ended last,
    whatever it decided); ``text`` renders the block's text for ``tool`` (HOOK-BLOCK-1)
    as the profile does; ``block_wins`` is its HOOK-DECISION-1 (a deprecated ``block``
    denies whatever ``permissionDecision`` says).
    """
    combined: Decision | None = None
    reasons: list[str] = []
    update: dict[str, Any] | None = None
    texts: list[HookText] = []
    prevent, stop_reason = False, None
    for run in runs:
        data = run.output_json()
        specific = _specific(data, PRE_TOOL_USE)
        decision, reason = _pre_decision(run, data, specific, block_wins=block_wins)
        if decision is not None and (combined is None or _RANK[decision] > _RANK[combined]):
            combined = decision  # HOOK-DECISION-1: deny over ask over allow
        if decision == "deny":
            said = _denial(run, reason, tool, text)  # HOOK-BLOCK-1
            if said:
                reasons.append(said)
        stops, why = _stop(data)
        if stops and not prevent:
            prevent, stop_reason = True, why
        replacement = specific.get("updatedInput")
        counts = updates == "always" or (
            updates == "with-allow-or-ask" and decision in ("allow", "ask")
        )
        if update is None and counts and isinstance(replacement, dict):
            update = replacement  # HOOK-UPDATE-1: the first in configuration order
        extra = _text(specific.get("additionalContext"))
        if extra is not None:
            texts.append(HookText("additional context", extra))
    if updates == "last-ended" and runs:  # HOOK-UPDATE-1 under the session's profile
        last = _specific(max(runs, key=lambda run: run.ended).output_json(), PRE_TOOL_USE)
        replacement = last.get("updatedInput")
        update = replacement if isinstance(replacement, dict) else None
    blocked = combined == "deny"
    block_reason = None
    if blocked:  # HOOK-BLOCK-1
        block_reason = (
            text("hook_block", reasons="\n".join(reasons)) if reasons else text("hook_block_bare")
        )
    return PreToolUseResult(
        decision=combined,
        block_reason=block_reason,
        updated_input=None if blocked else update,
        texts=texts,
        prevent_continuation=prevent,
        stop_reason=stop_reason,
    )


def interpret_post_tool_use(event: str, runs: Sequence[HookRun]) -> PostToolUseResult:
    """Combine the runs of one call's PostToolUse or PostToolUseFailure handlers."""
    texts: list[HookText] = []
    prevent, stop_reason = False, None
    mcp_output: Any = None
    for run in runs:
        if run.blocking:  # HOOK-EXIT-1, HOOK-POST-1: exit 2's stderr is feedback
            said = _text(run.stderr.strip())
            if said is not None:
                texts.append(HookText("feedback", said))
            continue
        data = run.output_json()
        if data is None:
            continue
        stops, why = _stop(data)  # HOOK-CONTINUE-1: the result itself is unchanged
        if stops and not prevent:
            prevent, stop_reason = True, why
        specific = _specific(data, event)
        extra = _text(specific.get("additionalContext"))
        if extra is not None:
            texts.append(HookText("additional context", extra))
        reason = _text(data.get("reason"))
        if data.get("decision") == "block" and reason is not None:  # HOOK-POST-1
            texts.append(HookText("feedback", reason))
        if event == POST_TOOL_USE and mcp_output is None:
            mcp_output = specific.get("updatedMCPToolOutput")
    return PostToolUseResult(
        texts=texts,
        prevent_continuation=prevent,
        stop_reason=stop_reason,
        updated_mcp_output=mcp_output,
    )


# --------------------------------------------------------------------------- public entry points


def run_pre_tool_use(
    ctx: ToolUseContext, *, tool_name: str, tool_input: Mapping[str, Any]
) -> PreToolUseResult:
    """DISP-PREHOOK-1: run the PreToolUse hooks of one call and combine them.

    ``ctx`` is the call's context (its session, ``tool_use_id``, ``cwd`` and
    ``events``); ``tool_name`` is the tool's own name; ``tool_input`` the
    observable input (DISP-BACKFILL-1).
    """
    runs = run_event(ctx, event=PRE_TOOL_USE, tool_name=tool_name, tool_input=dict(tool_input))
    profile = ctx.session.profile
    return interpret_pre_tool_use(
        runs,
        updates=profile.hook_updated_input,
        tool=tool_name,
        text=profile.text,
        block_wins=profile.hook_block_wins,
    )


def run_post_tool_use(
    ctx: ToolUseContext, *, tool_name: str, tool_input: Mapping[str, Any], tool_response: Any
) -> PostToolUseResult:
    """DISP-POSTHOOK-1: run the PostToolUse hooks of a call that succeeded.

    ``tool_response`` is the call's structured output (``outcome.output``).
    """
    runs = run_event(
        ctx,
        event=POST_TOOL_USE,
        tool_name=tool_name,
        tool_input=dict(tool_input),
        extra={"tool_response": tool_response},
    )
    return interpret_post_tool_use(POST_TOOL_USE, runs)


def run_post_tool_use_failure(
    ctx: ToolUseContext, *, tool_name: str, tool_input: Mapping[str, Any], error: str
) -> PostToolUseResult:
    """HOOK-FAILURE-1: run the PostToolUseFailure hooks of a call that ended at stage ``call``.

    ``error`` is the message the model sees, without the ``<tool_use_error>`` wrapper.
    """
    runs = run_event(
        ctx,
        event=POST_TOOL_USE_FAILURE,
        tool_name=tool_name,
        tool_input=dict(tool_input),
        extra={"error": error, "is_interrupt": False},
    )
    return interpret_post_tool_use(POST_TOOL_USE_FAILURE, runs)


def context_blocks(
    event: str, result: PreToolUseResult | PostToolUseResult
) -> list[dict[str, str]]:
    """HOOK-CONTEXT-1: the ``text`` blocks ``result`` appends to the call's ``tool_result``.

    The pipeline appends the PreToolUse blocks first, then the post event's.
    """
    return [
        {"type": "text", "text": f"<system-reminder>{event} hook {text.kind}: {text.text}{_END}"}
        for text in result.texts
    ]
