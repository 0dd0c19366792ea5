"""The concurrency scheduler and the streaming executor (SPEC.md, section 6).

Theory of operation. Blocks arrive in the model's order (all at once for a
plain message, one by one for the streaming executor). One coordinator, the
caller's thread, hands each block a start decision:

* a block may start when every earlier block has started, and either nothing
  is running, or the block and every running call are concurrency-safe and
  fewer than N are running (SCHED-RUN-1, SCHED-LIMIT-1, SCHED-STREAM-1);
* a call of a batch that is not concurrency-safe runs alone, and its context
  modifier is applied when it ends, before anything later starts
  (SCHED-CONTEXT-1); modifiers of concurrency-safe calls are dropped;
* a failed Bash call (or a Probe with ``fail`` and ``bash_error``) cancels the
  rest of its batch (SCHED-CASCADE-1); an interrupt cancels running ``cancel``
  calls and everything not started (SCHED-INTERRUPT-1).

Each call runs the whole dispatch pipeline on a thread of its own, taken from
``reference.workers``; results are put back in block order (SCHED-ORDER-1).
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from reference.abort import AbortSignal
from reference.dispatch import CallOutcome, Lookup, aborted_outcome, dispatch, look_up
from reference.events import EventLog
from reference.session import Session
from reference.settings import positive_int
from reference.tool import Tool, ToolUseContext
from reference.workers import WORKERS

DEFAULT_MAX_CONCURRENCY: Final = 10
CONCURRENCY_ENV: Final = "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY"
_LEADING_DIGITS: Final = re.compile(r"\s*\+?([0-9]+)")


def max_concurrency(session: Session) -> int | None:
    """SCHED-LIMIT-1: the env knob when it is a positive integer, else 10; None where the
    session's profile sets no limit (every safe call of a batch at once: the calls of one
    message are its only bound)."""
    if not session.profile.concurrency_limited:
        return None
    value = session.env.get(CONCURRENCY_ENV)
    if session.profile.concurrency_leading_digits:
        return _leading_digits(value) or DEFAULT_MAX_CONCURRENCY
    return positive_int(value) or DEFAULT_MAX_CONCURRENCY


def _leading_digits(value: str | None) -> int | None:
    """SCHED-LIMIT-1 where the profile's release reads the variable's leading digits
    (``2.5`` is 2, ``3x`` is 3): that number when positive, else None."""
    found = _LEADING_DIGITS.match(value or "")
    number = int(found.group(1)) if found else 0
    return number if number > 0 else None


def is_safe(lookup: Lookup) -> bool:
    """SCHED-PARTITION-1, TOOL-PREDICATE-1: found, schema-valid and declared safe."""
    if lookup.tool is None or lookup.parsed is None:
        return False
    try:
        return bool(lookup.tool.is_concurrency_safe(lookup.parsed))
    except Exception:  # TOOL-PREDICATE-1: a predicate that raises means "not safe"
        return False


@dataclass(frozen=True, slots=True)
class Batch:
    safe: bool
    indexes: list[int]


def partition(lookups: Sequence[Lookup]) -> list[Batch]:
    """SCHED-PARTITION-1: consecutive safe blocks together, every other alone."""
    batches: list[Batch] = []
    for index, lookup in enumerate(lookups):
        safe = is_safe(lookup)
        if safe and batches and batches[-1].safe:
            batches[-1].indexes.append(index)
        else:
            batches.append(Batch(safe=safe, indexes=[index]))
    return batches


@dataclass(frozen=True, slots=True)
class _Block:
    """One block's place in the message: its index, batch and safety."""

    index: int
    block: Mapping[str, Any]
    batch: int
    safe: bool
    lookup: Lookup


@dataclass(slots=True)
class _Running:
    index: int
    batch: int
    abort: AbortSignal
    safe: bool
    interrupt_cancels: bool


@dataclass(slots=True)
class _State:
    """What the coordinator and the workers share, under ``cond``."""

    cond: threading.Condition = field(default_factory=threading.Condition)
    running: dict[int, _Running] = field(default_factory=dict)
    results: dict[int, CallOutcome] = field(default_factory=dict)
    modifiers: dict[int, Callable[[ToolUseContext], ToolUseContext]] = field(default_factory=dict)
    cancelled_batches: dict[int, str] = field(default_factory=dict)  # batch -> DESC
    interrupted: bool = False
    faults: dict[int, BaseException] = field(default_factory=dict)  # SCHED-FAULT-1


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageRun:
    results: list[CallOutcome]
    batches: list[list[str]]


class Scheduler:
    """Runs one assistant message's tool_use blocks (SPEC.md section 6)."""

    def __init__(self, tools: Sequence[Tool], session: Session, events: EventLog) -> None:
        self.tools = tools
        self.session = session
        self.events = events
        self.limit = max_concurrency(session)
        self._inline = False

    def run(
        self,
        blocks: Sequence[Mapping[str, Any]],
        *,
        interrupt_after: Iterable[str] = (),
        streaming: bool = False,
        block_delay_ms: int = 0,
    ) -> MessageRun:
        """Run every block; one result per block, in block order (SCHED-ORDER-1)."""
        profile = self.session.profile
        lookups = [look_up(self.tools, block, profile) for block in blocks]  # once per block
        self.session.turn += 1  # READ-DEDUP-5: a new message, whose Reads all get content
        plan = partition(lookups)
        batch_of = {index: number for number, batch in enumerate(plan) for index in batch.indexes}
        state = _State()
        watch = set(interrupt_after)
        # A lone block with nothing to interrupt it runs on this thread: nothing
        # can overlap it, and a thread hand-off would cost more than a dedup hit.
        self._inline = len(blocks) == 1 and not streaming and not watch
        started: set[str] = set()
        if watch:
            self.events.subscribe(lambda event: self._on_event(event, watch, started, state))
        ctx_base = ToolUseContext(  # the context as the previous command left it
            session=self.session,
            tool_use_id="",
            cwd=self.session.cwd,
            events=self.events,
            probe_trail=self.session.probe_trail,
        )
        for index, block in enumerate(blocks):
            if streaming:  # SCHED-STREAM-1: blocks arrive one at a time
                if block_delay_ms and index:
                    time.sleep(block_delay_ms / 1000)
                self.events.emit("block", id=block.get("id"))
            batch = batch_of[index]
            item = _Block(
                index=index,
                block=block,
                batch=batch,
                safe=plan[batch].safe,
                lookup=lookups[index],
            )
            ctx_base = self._start(item, state, ctx_base)
        with state.cond:
            while state.running:
                state.cond.wait(0.05)
            if state.faults:  # SCHED-FAULT-1: the message answers as its call would alone
                raise state.faults[min(state.faults)]
            for index in sorted(state.modifiers):
                ctx_base = state.modifiers.pop(index)(ctx_base)
        self.session.cwd = ctx_base.cwd  # SCHED-CONTEXT-1: carried to later commands
        self.session.probe_trail = ctx_base.probe_trail
        ids = [str(block.get("id", "")) for block in blocks]
        return MessageRun(
            results=[state.results[index] for index in range(len(blocks))],
            batches=[[ids[index] for index in batch.indexes] for batch in plan],
        )

    def _start(self, item: _Block, state: _State, ctx_base: ToolUseContext) -> ToolUseContext:
        """Wait until the block may start, then start it (or cancel it)."""
        tool_use_id = str(item.block.get("id", ""))
        with state.cond:
            while not self._may_start(state, item.safe) and not self._cancelled(state, item.batch):
                state.cond.wait(0.05)
            # SCHED-CONTEXT-1: modifiers of ended non-safe calls, before anything later
            # (where the profile's release applies them only once the message has run)
            if self.session.profile.modifiers_between_batches:
                for ended in sorted(state.modifiers):
                    ctx_base = state.modifiers.pop(ended)(ctx_base)
            reason = self._cancelled(state, item.batch)
            if reason is not None:
                detail = state.cancelled_batches.get(item.batch, "")
                outcome = aborted_outcome(tool_use_id, reason, detail)
                state.results[item.index] = outcome
                self.events.emit("tool_end", id=tool_use_id, stage=outcome.stage)  # PROTO-EVENT-2
                return ctx_base
            abort = AbortSignal()
            ctx = ToolUseContext(
                session=self.session,
                tool_use_id=tool_use_id,
                cwd=ctx_base.cwd,
                abort=abort,
                events=self.events,
                probe_trail=ctx_base.probe_trail,
                tools=self.tools,
            )
            tool = item.lookup.tool
            state.running[item.index] = _Running(
                index=item.index,
                batch=item.batch,
                abort=abort,
                safe=item.safe,
                interrupt_cancels=tool is not None and tool.interrupt_behavior == "cancel",
            )
        if self._inline:
            self._work(item, ctx, state)
        else:
            WORKERS.run(functools.partial(self._work, item, ctx, state))
        return ctx_base

    def _may_start(self, state: _State, safe: bool) -> bool:
        # SCHED-RUN-1: a batch starts after the previous one ended, a non-safe call
        # runs alone; SCHED-LIMIT-1: at most N safe calls at once. The same rule,
        # block by block, is the streaming executor's (SCHED-STREAM-1).
        if not state.running:
            return True
        below = self.limit is None or len(state.running) < self.limit
        return safe and all(r.safe for r in state.running.values()) and below

    @staticmethod
    def _cancelled(state: _State, batch: int) -> str | None:
        if state.interrupted:
            return "user_interrupt"
        if batch in state.cancelled_batches:
            return "sibling_error"
        return None

    def _work(self, item: _Block, ctx: ToolUseContext, state: _State) -> None:
        """Run one call and record its end, even when the engine itself fails in it.

        SCHED-FAULT-1: an exception that escapes ``dispatch`` (a fault of the
        engine, never a tool's error) still ends the call, so the coordinator
        never waits for a result that will not come; ``run`` raises it once
        every other call ended, and the request answers PROTO-INTERNAL-1.
        """
        try:
            outcome = dispatch(self.tools, item.block, ctx, item.lookup)
        except BaseException as exc:
            with state.cond:
                state.faults[item.index] = exc
                state.running.pop(item.index, None)
                state.cond.notify_all()
            if self._inline:
                raise
            return
        with state.cond:
            state.results[item.index] = outcome
            state.running.pop(item.index, None)
            if outcome.cascades and item.batch not in state.cancelled_batches:  # SCHED-CASCADE-1
                state.cancelled_batches[item.batch] = outcome.cascades
                for other in state.running.values():
                    if other.batch == item.batch:
                        other.abort.abort("sibling_error", outcome.cascades)
            if not item.safe and outcome.context_modifier is not None:
                state.modifiers[item.index] = outcome.context_modifier
            state.cond.notify_all()

    def _on_event(
        self, event: Mapping[str, Any], watch: set[str], started: set[str], state: _State
    ) -> None:
        """PROTO-MESSAGE-2: the interrupt arrives once every named call started."""
        if event.get("type") != "tool_start" or state.interrupted:
            return
        started.add(str(event.get("id")))
        if not watch <= started:
            return
        with state.cond:
            state.interrupted = True
            self.events.emit("interrupt")
            for running in state.running.values():  # SCHED-INTERRUPT-1
                if running.interrupt_cancels:
                    running.abort.abort("user_interrupt")
            state.cond.notify_all()
