"""The permission decision of one call (SPEC.md section 4, PERM-ORDER-1).

:func:`decide` takes a call that passed ``validate_input`` and the PreToolUse
hooks, and returns a :class:`PermissionDecision`: ``allow`` or ``deny``, after
asking the emulated user (PERM-PROMPT-1) where the order of PERM-ORDER-1 ends
in ``ask``. The rules of every settings source, the permission mode, the
tool's own check, the safety check and the hooks' decision all enter here;
nothing else in the engine grants or refuses a call at this phase.

Which rules a tool consults (PERM-RULE-2) follows from the tool's value: its
name and aliases (bare-name rules), ``path_rules`` and ``get_path`` (``Read``
and ``Edit`` path rules), ``mcp_info`` or an ``mcp__server__tool`` name (MCP
server rules), and the name ``Bash`` (command rules over the observable
input's ``command``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel

from reference.permissions import bash_rules
from reference.permissions.directories import is_inside_working_directories
from reference.permissions.rules import Behavior, PathForms, Rule, is_under, resolve_path
from reference.permissions.session_rules import (
    path_forms,
    path_rule_applies,
    read_deny_applies,
    read_guard,
    session_rules,
)
from reference.session import Session
from reference.tool import PermissionCheck, Tool, ToolUseContext

DecisionBehavior = Literal["allow", "deny"]
DecisionReason = Literal["rule", "tool", "mode", "classifier", "hook", "prompt"]
DecisionSource = Literal["user_reject", "user_temporary", "user_permanent", "config"]
AskReason = Literal["rule", "tool", "safety", "hook", "default"]
HookDecision = Literal["allow", "ask"]
RuleVerdict = Literal["allow", "deny"] | None

USER_REJECT_MESSAGE: Final = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). STOP what "
    "you are doing and wait for the user to tell you how to proceed."
)

PLAN_BASH_DENIAL: Final = (  # PERM-MODE-3 under claude-code-latest, as 2.1.332 wrote it
    "Auto mode is unavailable: its safety check does not run for this session, so {tool} "
    "was not run. Other actions that need the check will be denied too, and retrying won't "
    "help. Finish what you can without them, then tell the user what is blocked and that "
    "they can switch to another permission mode."
)

# PERM-SAFETY-1: protected directories (any component) and file names.
PROTECTED_DIRECTORIES: Final = frozenset({".git", ".claude", ".vscode", ".idea"})
PROTECTED_FILES: Final = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".bash_aliases",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".zlogout",
        ".profile",
        ".gitconfig",
        ".gitmodules",
        ".mcp.json",
        ".claude.json",
    }
)

# PERM-RECORD-1: the rule sources whose allow is a user's grant.
_TEMPORARY_SOURCES: Final = frozenset({"session"})
_PERMANENT_SOURCES: Final = frozenset({"localSettings", "userSettings"})
_MCP_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
BASH_TOOL_NAME: Final = "Bash"


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDecision:
    """The outcome of the permission phase (DISP-PERM-1, PERM-RECORD-1).

    ``message`` is the model-facing text of a deny (PERM-MESSAGE-1, never
    wrapped in ``<tool_use_error>``) and None for an allow. ``rule`` and
    ``rule_source`` name the rule that decided, else None.
    """

    behavior: DecisionBehavior
    reason: DecisionReason
    source: DecisionSource
    rule: str | None = None
    rule_source: str | None = None
    message: str | None = None

    def to_outcome(self) -> dict[str, Any]:
        """PERM-RECORD-1: the ``outcome.permission`` object."""
        return {
            "behavior": self.behavior,
            "reason": self.reason,
            "source": self.source,
            "rule": self.rule,
            "rule_source": self.rule_source,
        }

    @classmethod
    def hook_block(cls, message: str) -> PermissionDecision:
        """HOOK-BLOCK-1: what a call blocked by PreToolUse hooks records (``deny``, ``hook``).

        ``message`` is the ``Blocked by PreToolUse hook...`` text the call ends with.
        """
        return cls(behavior="deny", reason="hook", source="user_reject", message=message)


class Classifier(Protocol):
    """The ``auto`` mode's classifier (PERM-CLASSIFIER-1), consulted at step 6 only.

    ``classify`` returns ``allow``, ``deny`` or None (no verdict). It sees the
    input that passed the schema and the call's context.
    """

    def classify(self, *, tool: Tool, parsed_input: BaseModel, ctx: ToolUseContext) -> RuleVerdict:
        """The verdict on one call; None leaves the decision to the later steps."""
        ...


class RuleBasedClassifier:
    """PERM-CLASSIFIER-1: the reference's deterministic classifier; never ``deny``."""

    def classify(self, *, tool: Tool, parsed_input: BaseModel, ctx: ToolUseContext) -> RuleVerdict:
        """No verdict for an empty classifier input or a destructive call; ``allow``
        for a read-only call or an edit-type tool (Edit, Write, NotebookEdit) whose
        path is inside the session ``root``, expanded and resolved."""
        try:
            text = tool.classifier_input(parsed_input)
        except Exception:
            return None  # fail closed: no input, no verdict
        if not text:
            return None  # PERM-CLASSIFIER-1: empty classifier input
        if is_destructive(tool, parsed_input):
            return None  # PERM-CLASSIFIER-1: destructive calls get no verdict
        if is_read_only(tool, parsed_input):
            return "allow"
        path = call_path(tool, parsed_input, ctx)
        if tool.path_rules == "edit" and path is not None:
            root = ctx.session.root
            if is_under(path, root) and is_under(resolve_path(path), resolve_path(root)):
                return "allow"
        return None


DEFAULT_CLASSIFIER: Final[Classifier] = RuleBasedClassifier()


def is_read_only(tool: Tool, parsed_input: BaseModel) -> bool:
    """TOOL-PREDICATE-1: a predicate that raises counts as not read-only."""
    try:
        return bool(tool.is_read_only(parsed_input))
    except Exception:
        return False


def is_destructive(tool: Tool, parsed_input: BaseModel) -> bool:
    """TOOL-PREDICATE-1: a predicate that raises counts as destructive."""
    try:
        return bool(tool.is_destructive(parsed_input))
    except Exception:
        return True


def call_path(tool: Tool, parsed_input: BaseModel, ctx: ToolUseContext) -> str | None:
    """TOOL-PATH-1: the expanded path path rules match, None for a tool without one."""
    if tool.get_path is None:
        return None
    return tool.get_path(parsed_input, ctx)


def is_protected_path(path: str) -> bool:
    """PERM-SAFETY-1 on one form of a path: a protected component or file name, in any case."""
    components = [part.lower() for part in path.split("/") if part]
    return bool(PROTECTED_DIRECTORIES.intersection(components)) or (
        bool(components) and components[-1] in PROTECTED_FILES
    )


def needs_safety_approval(tool: Tool, path: str | None) -> bool:
    """PERM-SAFETY-1: an edit-type tool on a protected expanded or resolved path."""
    if tool.path_rules != "edit" or path is None:
        return False
    return is_protected_path(path) or is_protected_path(resolve_path(path))


def mcp_server(tool: Tool) -> str | None:
    """REG-MCP-1: the (sanitized) server of an MCP tool, None for any other tool."""
    if tool.mcp_info is not None:
        return _MCP_NAME_CHARS.sub("_", tool.mcp_info.server_name)
    if tool.name.startswith("mcp__") and "__" in tool.name[5:]:
        return tool.name[5:].split("__", 1)[0]
    return None


@dataclass(frozen=True, slots=True)
class _RuleCall:
    """What the rules match on one call: its context, the tool, its path, its command.

    ``forms`` is the path with its anchors (None without a path), resolved at
    most once for every rule of this decision (PERM-PATH-3).
    """

    ctx: ToolUseContext
    tool: Tool
    path: str | None
    command: str | None
    forms: PathForms | None

    @property
    def session(self) -> Session:
        return self.ctx.session

    def rule_applies(self, rule: Rule) -> bool:
        """PERM-RULE-2: whether ``rule`` (deny or ask, or allow of a non-Bash tool) matches."""
        tool = self.tool
        if rule.specifier is None:
            if tool.matches_name(rule.tool):
                return True  # PERM-RULE-1: a bare name (or alias, or Tool(*)) matches every call
            server = mcp_server(tool)
            # REG-MCP-1 / PERM-RULE-2: mcp__server and mcp__server__* match the server's tools
            return server is not None and rule.tool in (f"mcp__{server}", f"mcp__{server}__*")
        if rule.tool in ("Read", "Edit") and tool.path_rules is not None:
            own = rule.tool == ("Edit" if tool.path_rules == "edit" else "Read")
            # PERM-READDENY-1: Read deny rules also deny the edit-type tools.
            read_deny = tool.path_rules == "edit" and rule.tool == "Read"
            read_deny = read_deny and rule.behavior == "deny"
            # PERM-EDITREAD-1: Edit allow rules also allow the read-type tools.
            edit_read = tool.path_rules == "read" and rule.tool == "Edit"
            edit_read = edit_read and rule.behavior == "allow"
            if not (own or read_deny or edit_read) or self.forms is None:
                return False
            if read_deny and not read_deny_applies(self.session, self.forms.path):
                return False  # PERM-READDENY-1 under the session's profile
            return path_rule_applies(rule, self.forms)  # PERM-PATH-3: expanded path
        if tool.name == BASH_TOOL_NAME and tool.matches_name(rule.tool):
            if self.command is None or rule.behavior == "allow":
                return False  # Bash allow rules cover a command only part by part
            return bash_rules.deny_rule_matches(rule.specifier, self.command)  # PERM-BASH-2
        return False  # PERM-RULE-2: a specifier on any other tool never matches

    def first_rule(self, behavior: Behavior) -> Rule | None:
        """The rule of ``behavior`` that applies and is reported (PERM-SOURCE-1)."""
        rules = session_rules(self.session, behavior)
        if behavior == "allow" and self.tool.name == BASH_TOOL_NAME:
            return self._bash_allow_rule(rules)
        return next((rule for rule in rules if self.rule_applies(rule)), None)

    def _bash_allow_rule(self, rules: tuple[Rule, ...]) -> Rule | None:
        """PERM-BASH-2: a bare-name allow, or allow specifiers covering every part."""
        bare = next((r for r in rules if r.specifier is None and self.rule_applies(r)), None)
        command_rules = [
            r for r in rules if r.specifier is not None and self.tool.matches_name(r.tool)
        ]
        by_command: Rule | None = None
        if self.command is not None and command_rules:
            guard = read_guard(self.ctx)  # BASH-PERM-1, BASH-PERM-2
            parts = bash_rules.split_command(self.command) or ()
            moved = guard.active and len(parts) > 1 and any(bash_rules.moves(p) for p in parts)
            index = bash_rules.first_allowing(
                self.command,
                [r.specifier or "" for r in command_rules],
                read_only_part=lambda part: (
                    not moved
                    and bash_rules.is_read_only_part(
                        part, guard, wider=self.session.profile.bash_wider_read_only
                    )
                ),
                unsplittable_whole=self.session.profile.allow_unsplittable_whole,
                literal_only=not self.session.profile.allow_redirects_and_quoted,
                # PERM-BASH-1 under the session's profile
                covers_file_commands=self.session.profile.bash_rules_cover_file_commands,
            )
            by_command = None if index is None else command_rules[index]
        candidates = [r for r in (bare, by_command) if r is not None]
        return min(candidates, key=rules.index) if candidates else None


def _allow(reason: DecisionReason, rule: Rule | None = None) -> PermissionDecision:
    """PERM-RECORD-1: an allow, its source from the deciding rule's source."""
    source: DecisionSource = "config"
    if rule is not None and rule.source in _TEMPORARY_SOURCES:
        source = "user_temporary"
    elif rule is not None and rule.source in _PERMANENT_SOURCES:
        source = "user_permanent"
    return PermissionDecision(
        behavior="allow",
        reason=reason,
        source=source,
        rule=None if rule is None else rule.text,
        rule_source=None if rule is None else rule.source,
    )


def _deny_rule_text(call: _RuleCall, rule: Rule) -> str:
    """PERM-MESSAGE-1: what a call a deny rule denies shows, by kind of call, as the
    session's profile renders it: a command, a search (Read rules on Glob and Grep), a
    Read, or any other call."""
    tool = call.tool
    if call.command is not None:
        key = "deny_rule_command"
    elif tool.name == "Read":
        key = "deny_rule_read"
    elif tool.path_rules == "read":
        key = "deny_rule_search"
    else:
        key = "deny_rule"
    return call.session.profile.text(
        key,
        tool=tool.name,
        rule=rule.text,
        source=rule.source,
        command=call.command or "",
        path=call.path or "",
    )


def _deny(reason: DecisionReason, message: str, rule: Rule | None = None) -> PermissionDecision:
    """PERM-RECORD-1: every deny has source ``user_reject``."""
    return PermissionDecision(
        behavior="deny",
        reason=reason,
        source="user_reject",
        rule=None if rule is None else rule.text,
        rule_source=None if rule is None else rule.source,
        message=message,
    )


def _mode_step(
    call: _RuleCall,
    parsed_input: BaseModel,
    classifier: Classifier,
) -> PermissionDecision | None:
    """PERM-ORDER-1 step 6: the mode's allow or deny, None when it says nothing."""
    tool = call.tool
    mode = call.session.permission_mode
    if mode == "bypassPermissions":
        return _allow("mode")  # PERM-MODE-4
    if mode == "acceptEdits":  # PERM-MODE-2
        if (
            tool.path_rules == "edit"
            and call.path is not None
            and is_inside_working_directories(call.path, call.session)
        ):
            return _allow("mode")
        return None
    if mode == "auto":  # PERM-CLASSIFIER-1
        verdict = classifier.classify(tool=tool, parsed_input=parsed_input, ctx=call.ctx)
        if verdict == "allow":
            return _allow("classifier")
        if verdict == "deny":
            return _deny(
                "classifier",
                f"Permission to use {tool.name} has been denied by the auto mode classifier.",
            )
    return None  # PERM-MODE-1 default, PERM-MODE-3 plan, PERM-MODE-5 dontAsk: nothing here


def decide(
    *,
    tool: Tool,
    parsed_input: BaseModel,
    observable: Mapping[str, Any],
    ctx: ToolUseContext,
    hook_decision: HookDecision | None,
    classifier: Classifier = DEFAULT_CLASSIFIER,
) -> PermissionDecision:
    """PERM-ORDER-1: decide one call, asking the emulated user where needed.

    ``parsed_input`` is the input that passed the schema (a hook's
    replacement, HOOK-UPDATE-1, when there is one); the tool's own check, its
    predicates, ``get_path`` and the classifier see it. ``observable`` is its
    observable form (DISP-BACKFILL-1); Bash command rules match its
    ``command``. ``hook_decision`` is the PreToolUse hooks' combined ``allow``
    or ``ask`` (HOOK-DECISION-1), None when no hook decided; a combined
    ``deny`` never gets here (it blocks the call first, HOOK-BLOCK-1,
    :meth:`PermissionDecision.hook_block`). ``ctx`` is the call's context:
    its session gives the rules, the mode (``permission_mode``) and the
    emulated user's answer; ``classifier`` replaces the ``auto`` mode's
    classifier.

    Emits at most one ``permission_request`` event, with the context's
    ``tool_use_id``, on the context's ``events`` (PERM-PROMPT-1).
    An exception raised by the tool's ``check_permissions`` or ``get_path``
    propagates.
    """
    path = call_path(tool, parsed_input, ctx)
    command = observable.get("command") if tool.name == BASH_TOOL_NAME else None
    forms = None if path is None else path_forms(ctx.session, path)
    call = _RuleCall(ctx, tool, path, command if isinstance(command, str) else None, forms)
    asked = _decide_or_ask(call, parsed_input, hook_decision, classifier)
    if isinstance(asked, PermissionDecision):
        return asked
    session = ctx.session
    plan_denies = session.permission_mode == "plan" and not session.profile.plan_as_default
    if plan_denies and tool.name == BASH_TOOL_NAME and asked == "default":  # PERM-MODE-3
        return _deny("mode", PLAN_BASH_DENIAL.format(tool=tool.name))
    if session.permission_mode == "dontAsk":  # PERM-MODE-5: no prompt, no event
        return _deny("mode", session.profile.text("dont_ask", tool=tool.name))  # PERM-MESSAGE-1
    answer = session.prompt  # PERM-PROMPT-1
    ctx.events.emit(
        "permission_request", id=ctx.tool_use_id, tool=tool.name, reason=asked, answer=answer
    )
    if answer == "allow":
        return PermissionDecision(behavior="allow", reason="prompt", source="user_temporary")
    return _deny("prompt", USER_REJECT_MESSAGE)


def _decide_or_ask(
    call: _RuleCall,
    parsed_input: BaseModel,
    hook_decision: HookDecision | None,
    classifier: Classifier,
) -> PermissionDecision | AskReason:
    """PERM-ORDER-1 steps 1-10: a final decision, or why the call must ask."""
    tool = call.tool
    rule = call.first_rule("deny")
    if rule is not None:  # PERM-ORDER-1 step 1
        return _deny("rule", _deny_rule_text(call, rule), rule)
    if call.first_rule("ask") is not None:  # PERM-ORDER-1 step 2
        return "rule"
    check: PermissionCheck = tool.check_permissions(parsed_input, call.ctx)
    if check.behavior == "deny":  # PERM-ORDER-1 step 3
        return _deny("tool", check.message or f"Permission to use {tool.name} has been denied.")
    if check.behavior == "ask":  # PERM-ORDER-1 step 3
        return "tool"
    if needs_safety_approval(tool, call.path):  # PERM-ORDER-1 step 4, PERM-SAFETY-1
        return "safety"
    if hook_decision == "ask":  # PERM-ORDER-1 step 5, HOOK-ALLOW-1
        return "hook"
    by_mode = _mode_step(call, parsed_input, classifier)
    if by_mode is not None:  # PERM-ORDER-1 step 6
        return by_mode
    rule = call.first_rule("allow")
    if rule is not None:  # PERM-ORDER-1 step 7
        return _allow("rule", rule)
    if check.behavior == "allow":  # PERM-ORDER-1 step 8
        return _allow("tool")
    plan_asks = call.session.permission_mode == "plan" and not call.session.profile.plan_as_default
    if hook_decision == "allow" and not plan_asks:  # PERM-ORDER-1 step 9, HOOK-ALLOW-1
        return _allow("hook")  # (PERM-MODE-3: a profile's plan mode does not take it)
    return "default"  # PERM-ORDER-1 step 10
