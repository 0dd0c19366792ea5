"""One session's rules: parsed once per settings, and the one path-rule lookup.

The permission decision (PERM-ORDER-1), the file tools' ``validate_input``
(READ-VALIDATE-1, WRITE-VALIDATE-1, EDIT-VALIDATE-1, NBEDIT-VALIDATE-1), the
search filter (PERM-FILTER-1) and Bash's own check (BASH-PERM-1) all consult
the rules through here, so every step refuses exactly the same paths.

The parsed rules are memoized on the session's :class:`~reference.settings.Settings`
object: settings never change during a session, and a session given new
settings gets a new object, hence a fresh memo.
"""

from __future__ import annotations

import os
from typing import Final

from reference import paths
from reference.permissions.rules import Behavior, PathForms, Rule, parse_rule, path_rule_matches
from reference.session import Session
from reference.tool import ToolUseContext

READ_RULES: Final = ("Read",)
"""The rule tool a read-type check consults (PERM-FILTER-1, BASH-PERM-1)."""
EDIT_RULES: Final = ("Edit", "Read")
"""What an edit-type tool's path check consults: its own rules and PERM-READDENY-1's."""


def read_deny_applies(session: Session, path: str) -> bool:
    """PERM-READDENY-1 under the session's profile: Read deny rules deny an edit of ``path``.

    Documented: always. ``claude-code-2.1.88``: only when something exists at the
    path, so creating a file is not denied by them.
    """
    if session.profile.read_deny_blocks_edits == "always":
        return True
    return os.path.lexists(path)


def edit_rule_tools(session: Session, path: str) -> tuple[str, ...]:
    """The rule tools an edit-type tool's deny check on ``path`` consults: its own and,
    where PERM-READDENY-1 applies under the session's profile, ``Read``'s."""
    return EDIT_RULES if read_deny_applies(session, path) else EDIT_RULES[:1]


def session_rules(session: Session, behavior: Behavior) -> tuple[Rule, ...]:
    """PERM-SOURCE-1: every parseable rule of ``behavior``, sources then lists in order."""

    def parse() -> tuple[Rule, ...]:
        rules = []
        for source, entry in session.settings.permission_entries(behavior):
            rule = parse_rule(entry, behavior=behavior, source=source)
            if rule is not None:  # PERM-RULE-1: text that is not a rule is ignored
                rules.append(rule)
        return tuple(rules)

    return session.settings.memo(("rules", behavior), parse)


def path_forms(session: Session, path: str) -> PathForms:
    """PERM-PATH-1: the expanded ``path`` with the session's anchors, for one scan."""
    # PERM-PATH-1: the original cwd, never the current one
    return PathForms(path, session.root, session.original_cwd, session.home)


def path_rule_applies(rule: Rule, forms: PathForms) -> bool:
    """PERM-PATH-1, PERM-PATH-2, PERM-PATH-3: a path rule against an expanded path.

    A bare name is no path rule.
    """
    if rule.specifier is None:
        return False
    return path_rule_matches(rule.specifier, forms, behavior=rule.behavior)


def matching_deny_rule(session: Session, path: str, tools: tuple[str, ...]) -> Rule | None:
    """The first deny rule on one of ``tools`` whose path specifier matches ``path``.

    Sources in PERM-SOURCE-1 order; ``path`` is an expanded path, matched as
    PERM-PATH-3 says (a deny applies when the path as written or resolved
    matches), so a link never routes around a deny. PERM-RULE-2: only path
    rules count here; a bare name removes its tool from the pool instead
    (REG-DENY-1).
    """
    forms = path_forms(session, path)  # resolved at most once for the whole scan
    for rule in session_rules(session, "deny"):
        if rule.tool in tools and path_rule_applies(rule, forms):
            return rule
    return None


def argument_denied(ctx: ToolUseContext, argument: str) -> bool:
    """BASH-PERM-1: a command argument, taken as a path (FILE-PATH-1) relative to
    the context's cwd, matches a ``Read`` deny rule. An argument with a NUL is no path."""
    if paths.has_nul(argument):
        return False
    return matching_deny_rule(ctx.session, ctx.expand(argument), READ_RULES) is not None
