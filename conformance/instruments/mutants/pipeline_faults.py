"""Pipeline faults: mutants of the dispatch pipeline, permissions, hooks and scheduler.

Every one here is a process patch (see :mod:`conformance.instruments.mutants.process_patches`):
the fault sits in a helper the engine reaches through a module global (the
permission decision's steps, the scheduler's partition, the ``Scheduler`` and
dispatch's ``_Call`` classes), so it is rebound in the mutant's own adapter
process only. A survivor is a hole in the scenarios: add the scenario, never
weaken the mutant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from conformance.instruments.mutants.base import process_patch, rebind
from reference import dispatch, scheduler
from reference.dispatch import CallOutcome
from reference.permissions import decision
from reference.permissions.decision import PermissionDecision
from reference.tool import Tool, ToolUseContext

# -- permissions ------------------------------------------------------------------


def _wrap_decide_or_ask(after: Any) -> None:
    """Rebind ``decision._decide_or_ask`` to ``after(its result, call, hook_decision)``."""
    original = decision._decide_or_ask

    def decide_or_ask(
        call: Any,
        parsed_input: BaseModel,
        hook_decision: decision.HookDecision | None,
        classifier: decision.Classifier,
    ) -> PermissionDecision | decision.AskReason:
        result = original(call, parsed_input, hook_decision, classifier)
        verdict: PermissionDecision | decision.AskReason = after(result, call, hook_decision)
        return verdict

    rebind(original, decide_or_ask)


@process_patch(
    "deny-not-final",
    "A deny rule is only a default: bypassPermissions or a matching allow rule overrides it",
    breaks=("PERM-ORDER-1", "PERM-MODE-4"),
)
def _deny_not_final() -> None:
    def after(
        result: PermissionDecision | str, call: Any, hook: str | None
    ) -> PermissionDecision | str:
        if isinstance(result, PermissionDecision) and (result.behavior, result.reason) == (
            "deny",
            "rule",
        ):
            if call.session.permission_mode == "bypassPermissions":
                return decision._allow("mode")
            allow = call.first_rule("allow")
            if allow is not None:
                return decision._allow("rule", allow)
        return result

    _wrap_decide_or_ask(after)


@process_patch(
    "hook-allow-overrides-deny",
    "A PreToolUse hook's allow beats a deny or ask rule",
    breaks=("HOOK-ALLOW-1", "PERM-ORDER-1"),
)
def _hook_allow_overrides_deny() -> None:
    def after(
        result: PermissionDecision | str, call: Any, hook: str | None
    ) -> PermissionDecision | str:
        if hook != "allow":
            return result
        if isinstance(result, PermissionDecision):
            return decision._allow("hook") if result.reason == "rule" else result
        return decision._allow("hook") if result == "rule" else result

    _wrap_decide_or_ask(after)


@process_patch(
    "safety-check-skipped-in-bypass",
    "bypassPermissions allows edits of protected paths (.git, .claude, .bashrc...) unasked",
    breaks=("PERM-SAFETY-1", "PERM-MODE-4"),
)
def _safety_check_skipped_in_bypass() -> None:
    def after(
        result: PermissionDecision | str, call: Any, hook: str | None
    ) -> PermissionDecision | str:
        if result == "safety" and call.session.permission_mode == "bypassPermissions":
            return decision._allow("mode")
        return result

    _wrap_decide_or_ask(after)


# -- the dispatch pipeline -----------------------------------------------------------


class _CallGetsObservable(dispatch._Call):
    """call() gets the observable input the PreToolUse hooks were shown.

    That is the model's input with its path fields expanded, parsed again; a
    hook's replacement (HOOK-UPDATE-1) is checked and decided on but never
    reaches call().
    """

    first_observable: Mapping[str, Any] | None = None

    def _check_input(
        self, tool: Tool, raw_input: object, *, from_hook: bool = False
    ) -> CallOutcome | tuple[Any, dict[str, Any]]:
        checked = super()._check_input(tool, raw_input, from_hook=from_hook)
        if not isinstance(checked, CallOutcome) and self.first_observable is None:
            self.first_observable = checked[1]
        return checked

    def _call(self, tool: Tool, parsed: Any, observable: Mapping[str, Any]) -> CallOutcome:
        if self.first_observable is not None:
            parsed = tool.input_model.model_validate(dict(self.first_observable))
        return super()._call(tool, parsed, observable)


@process_patch(
    "original-input-not-passed-to-call",
    "call() receives the observable (backfilled) input the hooks saw, not the model's "
    "original or a hook's replacement",
    breaks=("TOOL-CALL-1", "DISP-BACKFILL-1", "HOOK-UPDATE-1"),
)
def _original_input_not_passed_to_call() -> None:
    rebind(dispatch._Call, _CallGetsObservable)


# -- the scheduler ---------------------------------------------------------------------


class _CompletionOrder(scheduler.Scheduler):
    """Results come back in the order the calls ended, not in block order."""

    def run(
        self,
        blocks: Sequence[Mapping[str, Any]],
        *,
        interrupt_after: Iterable[str] = (),
        streaming: bool = False,
        block_delay_ms: int = 0,
    ) -> scheduler.MessageRun:
        self.ended: list[int] = []
        run = super().run(
            blocks,
            interrupt_after=interrupt_after,
            streaming=streaming,
            block_delay_ms=block_delay_ms,
        )
        order = [*self.ended, *(i for i in range(len(blocks)) if i not in self.ended)]
        return scheduler.MessageRun(results=[run.results[i] for i in order], batches=run.batches)

    def _work(self, item: Any, ctx: ToolUseContext, state: Any) -> None:
        super()._work(item, ctx, state)
        with state.cond:
            self.ended.append(item.index)


@process_patch(
    "results-in-completion-order",
    "A message's results are returned in the order the calls completed, not block order",
    breaks=("SCHED-ORDER-1",),
)
def _results_in_completion_order() -> None:
    rebind(scheduler.Scheduler, _CompletionOrder)


@process_patch(
    "unsafe-tool-run-concurrently",
    "A call that is not concurrency-safe joins the concurrent batch before it",
    breaks=("SCHED-PARTITION-1", "SCHED-RUN-1"),
)
def _unsafe_tool_run_concurrently() -> None:
    def partition(lookups: Sequence[dispatch.Lookup]) -> list[scheduler.Batch]:
        batches: list[scheduler.Batch] = []
        for index, lookup in enumerate(lookups):
            safe = scheduler.is_safe(lookup)
            if batches and batches[-1].safe:  # safe or not, it joins the running batch
                batches[-1].indexes.append(index)
            else:
                batches.append(scheduler.Batch(safe=safe, indexes=[index]))
        return batches

    rebind(scheduler.partition, partition)


class _SafeModifiersKept(scheduler.Scheduler):
    """Context modifiers of concurrency-safe calls are applied too, inside their batch."""

    def _work(self, item: Any, ctx: ToolUseContext, state: Any) -> None:
        outcome = dispatch.dispatch(self.tools, item.block, ctx, item.lookup)
        with state.cond:
            state.results[item.index] = outcome
            state.running.pop(item.index, None)
            if outcome.cascades and item.batch not in state.cancelled_batches:
                state.cancelled_batches[item.batch] = outcome.cascades
                for other in state.running.values():
                    if other.batch == item.batch:
                        other.abort.abort("sibling_error", outcome.cascades)
            if outcome.context_modifier is not None:  # the fault: safe calls' too
                state.modifiers[item.index] = outcome.context_modifier
            state.cond.notify_all()


@process_patch(
    "context-modifier-inside-batch",
    "A concurrency-safe call's context modifier is honoured, reaching later calls of its batch",
    breaks=("SCHED-CONTEXT-1", "TOOL-MODIFIER-1"),
)
def _context_modifier_inside_batch() -> None:
    rebind(scheduler.Scheduler, _SafeModifiersKept)
