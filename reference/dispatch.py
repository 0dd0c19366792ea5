"""The dispatch pipeline: one tool_use block through every phase (SPEC.md section 3).

Phases, in order: find the tool (name or alias); abort check; strict schema;
observable-input backfill; validateInput; PreToolUse hooks; the permission
decision; call() with the model's original input (or a hook's replacement);
PostToolUse or PostToolUseFailure hooks; result mapping and persistence of a
large result. Every phase that refuses returns a coded outcome and nothing
after it runs; no exception from a tool ever leaves ``dispatch``.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from reference import errors, fileio, hooks
from reference.export import is_deferred
from reference.permissions.decision import PermissionDecision, decide
from reference.permissions.session_rules import open_guard
from reference.profiles import DOCUMENTED, Profile, schema_context
from reference.results import bound_output, persist, size_of, with_text_blocks
from reference.schema_errors import as_object, format_schema_error, json_type, schema_error_text
from reference.tool import ContextModifier, ResultContent, Tool, ToolUseContext, find_tool

Stage = Literal[
    "unknown_tool", "input_schema", "validate", "pre_hook", "permission", "call", "done", "aborted"
]
"""SPEC 0.3: where a call ended."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOutcome:
    """Everything the protocol reports about one call."""

    tool_use_id: str
    content: ResultContent
    is_error: bool
    stage: Stage
    error_code: int | None = None
    error_name: str | None = None
    dedup: bool = False
    output: Mapping[str, Any] | None = None
    output_cut: int | None = None  # RES-OUTPUT-1: characters left out of ``output``
    persisted_path: str | None = None
    context_modifier: ContextModifier | None = field(default=None, repr=False)
    cascades: str | None = None  # SCHED-CASCADE-2's DESC when this failure cancels siblings
    permission: Mapping[str, Any] | None = None  # PERM-RECORD-1
    prevent_continuation: bool = False  # HOOK-CONTINUE-1
    stop_reason: str | None = None

    def to_protocol(self) -> dict[str, Any]:
        return {
            "tool_result": {  # RES-BLOCK-1; DISP-ID-1: every result, refusals included
                "type": "tool_result",
                "tool_use_id": self.tool_use_id,
                "content": self.content,
                "is_error": self.is_error,
            },
            "outcome": {  # PROTO-OUTCOME-1
                "stage": self.stage,
                "error_code": self.error_code,
                "error_name": self.error_name,
                "dedup": self.dedup,
                "output": dict(self.output) if self.output is not None else None,
                "output_cut": self.output_cut,  # RES-OUTPUT-1
                "persisted_path": self.persisted_path,
                "permission": dict(self.permission) if self.permission is not None else None,
                "prevent_continuation": self.prevent_continuation,
                "stop_reason": self.stop_reason,
            },
        }


def aborted_outcome(tool_use_id: str, reason: str | None, detail: str = "") -> CallOutcome:
    """DISP-ABORT-1: the result of a call cancelled for ``reason``.

    ``sibling_error``: SCHED-CASCADE-2; ``user_interrupt`` (and any other
    reason): SCHED-INTERRUPT-2, unwrapped because it reports the user's act.
    """
    if reason == "sibling_error":
        return CallOutcome(
            tool_use_id=tool_use_id,
            content=wrap_error(f"Cancelled: parallel tool call {detail} errored"),
            is_error=True,
            stage="aborted",
            error_name=errors.SiblingErrorAbort.error_name,
        )
    return CallOutcome(
        tool_use_id=tool_use_id,
        content="[Request interrupted by user for tool use]",
        is_error=True,
        stage="aborted",
        error_name=errors.UserInterruptAbort.error_name,
    )


def wrap_error(message: str) -> str:
    """ERR-CODE-1, ERR-CODE-2: what the model sees of an error."""
    return f"<tool_use_error>{message}</tool_use_error>"


def classify_error(exc: BaseException) -> str:
    """DISP-CLASSIFY-1: errno code, else a stable name, else ``Error``; never raw text."""
    if isinstance(exc, errors.ToolSystemError):
        return exc.error_name
    if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
        return f"Error:{errno.errorcode[exc.errno]}"
    name = type(exc).__name__
    return name[:60] if name != "Exception" and len(name) > 3 else "Error"


def _model_message(tool: Tool, exc: BaseException) -> str:
    """ERR-CODE-2 for named errors; DISP-CLASSIFY-1's fixed text for anything else."""
    if isinstance(exc, errors.ToolSystemError):
        return exc.message
    message = f"Unexpected error in {tool.name}: {classify_error(exc)}"
    if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
        message += f" ({os.strerror(exc.errno)})"
    return message


@dataclass(frozen=True, slots=True)
class Lookup:
    """DISP-FIND-1 and DISP-SCHEMA-1 done once for one block.

    ``tool`` is the tool the block names (None: no such tool); ``parsed`` its
    input as the strict schema parsed it, None when the input is no object or
    fails the schema (dispatch then checks it again, to say why). The
    scheduler makes one per block for its partition (SCHED-PARTITION-1) and
    hands it to :func:`dispatch`, so a call finds its tool and checks its
    schema once.
    """

    tool: Tool | None
    parsed: BaseModel | None


def look_up(
    tools: Sequence[Tool], tool_use: Mapping[str, Any], profile: Profile = DOCUMENTED
) -> Lookup:
    """The block's tool (REG-LOOKUP-1: name or alias) and its schema-checked input.

    ``profile``: the session's, whose release may read some inputs otherwise
    (DISP-SCHEMA-1, READ-RANGE-1; :func:`reference.tools.common.schema_context`).
    """
    name = tool_use.get("name")
    tool = find_tool(tools, name) if isinstance(name, str) else None
    raw = tool_use.get("input")
    if tool is None or not isinstance(raw, Mapping):
        return Lookup(tool, None)
    try:
        return Lookup(
            tool, tool.input_model.model_validate(dict(raw), context=schema_context(profile))
        )
    except Exception:  # dispatch checks it again and reports the refusal
        return Lookup(tool, None)


def dispatch(
    tools: Sequence[Tool],
    tool_use: Mapping[str, Any],
    ctx: ToolUseContext,
    lookup: Lookup | None = None,
) -> CallOutcome:
    """Run one tool_use block through the pipeline; never raises for tool outcomes.

    ``lookup`` is :func:`look_up` of this very block in this very pool, when
    the caller made it already.
    """
    tool_use_id = str(tool_use.get("id", ""))
    name = tool_use.get("name")
    if ctx.tools is not tools or ctx.tool_use_id != tool_use_id:
        # TOOL-CONTEXT-1: the call sees the pool it was found in, and its own id
        ctx = replace(ctx, tools=tools, tool_use_id=tool_use_id)
    ctx.events.emit("tool_start", id=tool_use_id, name=name)  # PROTO-EVENT-1
    outcome = _Call(tools, tool_use_id, name, tool_use.get("input"), ctx, lookup=lookup).run()
    ctx.events.emit("tool_end", id=tool_use_id, stage=outcome.stage)
    return outcome


def _hook_input_keys(
    tool: Tool, hook_input: Mapping[str, Any], profile: Profile
) -> Mapping[str, Any]:
    """HOOK-UPDATE-1: a hook's replacement input as the schema checks it: whole, or, under a
    profile that drops them, without the keys the tool's schema does not know."""
    if profile.hook_input_unknown_keys == "refused":
        return hook_input
    fields = tool.input_model.model_fields
    known = {*fields, *(f.alias for f in fields.values() if f.alias)}
    return {key: value for key, value in hook_input.items() if key in known}


def _refused(tool_use_id: str, stage: Stage, message: str, **fields: Any) -> CallOutcome:
    return CallOutcome(
        tool_use_id=tool_use_id, content=wrap_error(message), is_error=True, stage=stage, **fields
    )


class _Call:
    """One call's way through the phases; each phase returns an outcome to stop."""

    def __init__(
        self,
        tools: Sequence[Tool],
        tool_use_id: str,
        name: object,
        raw_input: object,
        ctx: ToolUseContext,
        *,
        lookup: Lookup | None = None,
    ) -> None:
        self.tools = tools
        self.lookup = lookup
        self.id = tool_use_id
        self.name = name
        self.raw_input = raw_input
        self.ctx = ctx
        self.session = ctx.session
        self.pre_blocks: list[dict[str, str]] = []  # HOOK-CONTEXT-1 texts from PreToolUse
        self.permission: Mapping[str, Any] | None = None  # PERM-RECORD-1
        self.prevent_continuation = False  # HOOK-CONTINUE-1
        self.stop_reason: str | None = None

    def run(self) -> CallOutcome:
        if self.lookup is not None:
            tool = self.lookup.tool
        else:
            tool = find_tool(self.tools, self.name) if isinstance(self.name, str) else None
        if tool is None:
            return _refused(  # DISP-FIND-1
                self.id,
                "unknown_tool",
                self._unknown_tool_text(),
                error_name=errors.UnknownToolError.error_name,
            )
        if self.ctx.abort.is_set():  # DISP-ABORT-1
            return aborted_outcome(self.id, self.ctx.abort.reason, self.ctx.abort.detail)
        checked = self._check_input(tool, self.raw_input)
        if isinstance(checked, CallOutcome):
            return checked
        parsed, observable = checked
        pre = hooks.run_pre_tool_use(  # DISP-PREHOOK-1
            self.ctx, tool_name=tool.name, tool_input=observable
        )
        self.pre_blocks = self._hook_blocks(hooks.PRE_TOOL_USE, pre)
        self.prevent_continuation = pre.prevent_continuation
        self.stop_reason = pre.stop_reason
        if pre.blocked:  # HOOK-BLOCK-1: before any permission rule
            message = pre.block_reason or hooks.BLOCK_PREFIX
            self.permission = PermissionDecision.hook_block(message).to_outcome()
            return self._ended(
                message, stage="pre_hook", error_name=errors.HookBlockedError.error_name
            )
        if pre.updated_input is not None:  # HOOK-UPDATE-1: checked again from the schema on
            checked = self._check_input(tool, pre.updated_input, from_hook=True)
            if isinstance(checked, CallOutcome):
                return checked
            parsed, observable = checked
        decision = decide(  # DISP-PERM-1
            tool=tool,
            parsed_input=parsed,
            observable=observable,
            ctx=self.ctx,
            hook_decision=pre.decision if pre.decision != "deny" else None,
        )
        self.permission = decision.to_outcome()
        if decision.behavior == "deny":  # PERM-MESSAGE-1: not wrapped
            message = decision.message or "Permission denied."
            return self._ended(
                message, stage="permission", error_name=errors.PermissionDeniedError.error_name
            )
        return self._call(tool, parsed, observable)

    def _deferred_schema_hint(self, tool: Tool) -> str:
        """REG-DEFER-1: what the profile appends to a failed call of an MCP tool whose schema
        the model was not shown (deferred, and not yet returned by ToolSearch)."""
        info = tool.mcp_info
        if info is None or not is_deferred(tool) or tool.name in self.session.discovered_tools:
            return ""
        return self.session.profile.text(
            "deferred_schema_hint", name=tool.name, schema=info.input_schema
        )

    def _unknown_tool_text(self) -> str:
        """DISP-FIND-1's text, in the profile's words for the name of a built-in tool a
        whole-tool deny rule removed (REG-DENY-1; not an alias) and for a name naming a tool
        of the pool in other case."""
        profile = self.session.profile
        name = str(self.name)
        if name in self.session.removed_tools:
            return profile.text("unknown_tool_denied", name=name)
        folded = name.casefold()
        other = next((t.name for t in self.tools if t.name.casefold() == folded), None)
        if other is not None:
            return profile.text("unknown_tool_case", name=name, tool=other)
        return profile.text("unknown_tool", name=name)

    def _hook_blocks(
        self, event: str, result: hooks.PreToolUseResult | hooks.PostToolUseResult
    ) -> list[dict[str, str]]:
        """HOOK-CONTEXT-1: the hooks' texts the result carries, where the profile puts them
        in the tool_result (a release shows them beside it)."""
        if not self.session.profile.hook_texts_in_result:
            return []
        return hooks.context_blocks(event, result)

    def _ended(
        self,
        message: str,
        *,
        stage: Stage,
        error_name: str,
        post: list[dict[str, str]] | None = None,
    ) -> CallOutcome:
        """A call refused or failed after phase 7: the message, then the hooks' texts."""
        return CallOutcome(
            tool_use_id=self.id,
            content=with_text_blocks(message, self.pre_blocks + (post or [])),
            is_error=True,
            stage=stage,
            error_name=error_name,
            permission=self.permission,
            prevent_continuation=self.prevent_continuation,
            stop_reason=self.stop_reason,
        )

    def _check_input(
        self, tool: Tool, raw_input: object, *, from_hook: bool = False
    ) -> CallOutcome | tuple[Any, dict[str, Any]]:
        """Phases 4 to 6: strict schema, observable backfill, validate_input.

        The input as parsed (what ``call()`` gets, TOOL-CALL-1) and its
        observable form (DISP-BACKFILL-1), or the outcome that ends the call.
        ``from_hook``: the input is a PreToolUse hook's replacement (HOOK-UPDATE-1), whose
        schema refusal the profile words as its own and whose unknown keys it may drop.
        """
        profile = self.session.profile
        raw_input = as_object(raw_input, profile)  # DISP-SCHEMA-2: the profile's reading
        if from_hook and isinstance(raw_input, Mapping):
            raw_input = _hook_input_keys(tool, raw_input, profile)
        if not isinstance(raw_input, Mapping):
            line = profile.text("schema_not_object", provided=json_type(raw_input))
            return _refused(
                self.id,
                "input_schema",
                schema_error_text(tool.name, [line]),
                error_name=errors.InputValidationError.error_name,
            )
        try:
            if raw_input is self.raw_input and self.lookup and self.lookup.parsed is not None:
                parsed = self.lookup.parsed  # DISP-SCHEMA-1, checked once by look_up
            else:
                parsed = tool.input_model.model_validate(
                    dict(raw_input), context=schema_context(self.session.profile)
                )
        except ValidationError as exc:
            text = format_schema_error(tool, raw_input, exc, profile)
            if not from_hook:
                return _refused(  # DISP-SCHEMA-1
                    self.id, "input_schema", text, error_name=errors.InputValidationError.error_name
                )
            return CallOutcome(  # HOOK-UPDATE-1: the replacement's refusal, in the profile's words
                tool_use_id=self.id,
                content=profile.text(
                    "hook_input_invalid",
                    error=wrap_error(text),
                    tool=tool.name,
                    issues=text.removeprefix("InputValidationError: "),
                ),
                is_error=True,
                stage="input_schema",
                error_name=errors.InputValidationError.error_name,
            )
        # DISP-BACKFILL-1: hooks and permissions see expanded paths; call() gets the original.
        observable = tool.backfill_observable_input(raw_input, self.ctx.expand)
        if from_hook and profile.hook_input_expanded:  # HOOK-UPDATE-1: call() gets it expanded
            parsed = tool.input_model.model_validate(
                dict(observable), context=schema_context(profile)
            )
        if tool.validate_input is not None:
            try:
                tool.validate_input(parsed, self.ctx)  # TOOL-VALIDATE-1: before hooks, prompts
            except errors.Refusal as refusal:  # DISP-VALIDATE-1
                return CallOutcome(  # ERR-CODE-1, in the refusal's text of the profile
                    tool_use_id=self.id,
                    content=profile.text(refusal.text, message=refusal.message),
                    is_error=True,
                    stage="validate",
                    error_code=tool.error_code(refusal),
                    error_name=refusal.error_name,
                )
            except Exception as exc:  # ERR-CODE-3: e.g. ELOOP from stat; never escapes
                return _refused(
                    self.id, "call", _model_message(tool, exc), error_name=classify_error(exc)
                )
        return parsed, observable

    def _call(self, tool: Tool, parsed: Any, observable: Mapping[str, Any]) -> CallOutcome:
        """Phases 9 to 11: call(), post hooks, mapping and persistence."""
        try:
            with fileio.guarded(open_guard(self.ctx)):  # FILE-OPEN-1
                result = tool.call(parsed, self.ctx)  # DISP-CALL-1
        except Exception as exc:  # ERR-CODE-2 / ERR-CODE-3: every failure becomes a coded result
            if self.ctx.abort.is_set():  # SCHED-ABORT-1: stopped because it was aborted
                return aborted_outcome(self.id, self.ctx.abort.reason, self.ctx.abort.detail)
            message = _model_message(tool, exc)
            post = hooks.run_post_tool_use_failure(  # HOOK-FAILURE-1
                self.ctx, tool_name=tool.name, tool_input=observable, error=message
            )
            self.prevent_continuation |= post.prevent_continuation
            self.stop_reason = self.stop_reason or post.stop_reason
            ended = self._ended(
                self.session.profile.text("call_error", message=message)  # ERR-CODE-2
                + self._deferred_schema_hint(tool),
                stage="call",
                error_name=classify_error(exc),
                post=self._hook_blocks(hooks.POST_TOOL_USE_FAILURE, post),
            )
            # SCHED-CASCADE-1: the tool says whether its failure cancels the batch (TOOL-DEFAULT-1),
            # where the session's profile cascades at all
            if not self.session.profile.bash_cascade:
                return ended
            return replace(ended, cascades=tool.cascade_description(parsed, exc))
        if self.ctx.abort.reason == "sibling_error":  # SCHED-CASCADE-1: not ended when cancelled
            return aborted_outcome(self.id, self.ctx.abort.reason, self.ctx.abort.detail)
        post = hooks.run_post_tool_use(  # DISP-POSTHOOK-1
            self.ctx, tool_name=tool.name, tool_input=observable, tool_response=dict(result.data)
        )
        content = tool.map_result(
            result.data, self.session.profile
        )  # DISP-MAP-1; TOOL-MAP-1: stage done only
        if tool.mcp_info is not None and post.updated_mcp_output is not None:  # HOOK-POST-1
            content = post.updated_mcp_output
        persisted_path = None
        # RES-PERSIST-2: persisting is on the success path alone, never for an error
        if size_of(content) > tool.max_result_size_chars:  # RES-PERSIST-1
            content, persisted_path = persist(
                content, session_dir=self.session.session_dir, tool_use_id=self.id
            )
        blocks = self.pre_blocks + self._hook_blocks(hooks.POST_TOOL_USE, post)
        content = with_text_blocks(content, blocks)
        output, output_cut = bound_output(result.data, content)  # RES-OUTPUT-1
        return CallOutcome(
            tool_use_id=self.id,
            content=content,
            is_error=False,
            stage="done",
            dedup=bool(result.outcome.get("dedup", False)),
            output=output,
            output_cut=output_cut,
            persisted_path=persisted_path,
            context_modifier=result.context_modifier,
            permission=self.permission,
            prevent_continuation=self.prevent_continuation or post.prevent_continuation,
            stop_reason=self.stop_reason or post.stop_reason,
        )
