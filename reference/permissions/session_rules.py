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
import stat as statmod
from typing import Final

from reference import errors, fileio, paths
from reference.permissions.bash_reach import ReadGuard
from reference.permissions.rules import (
    Behavior,
    PathForms,
    Rule,
    anchored_pattern,
    parse_rule,
    path_rule_matches,
)
from reference.session import Session
from reference.tool import ToolUseContext

READ_RULES: Final = ("Read",)
"""The rule tool a read-type check consults (PERM-FILTER-1, BASH-PERM-1)."""
EDIT_RULES: Final = ("Edit", "Read")
"""What an edit-type tool's path check consults: its own rules and PERM-READDENY-1's."""
HARDLINK_WALK_LIMIT: Final = 5000
"""PERM-PATH-4: entries looked at under one rule's directory before failing closed."""
_GLOB_CHARS: Final = frozenset("*?[")


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
    rules = [rule for rule in session_rules(session, "deny") if rule.tool in tools]
    for rule in rules:
        if path_rule_applies(rule, forms):
            return rule
    return hardlink_rule(session, path, rules)  # PERM-PATH-4


def hardlink_rule(
    session: Session, path: str, rules: list[Rule], st: os.stat_result | None = None
) -> Rule | None:
    """PERM-PATH-4: the first of ``rules`` covering another link of ``path``'s file.

    Only a regular file with more than one link is looked at (``st``, when
    given, is its ``fstat``; else ``path`` is stat'ed). Its
    ``(st_dev, st_ino)`` is compared with those of the files each rule covers
    under the rule's literal directory (the anchored pattern up to its first
    component with a glob character); a directory too large to check
    (HARDLINK_WALK_LIMIT entries) counts as covering the file.
    """
    if not rules:
        return None
    if st is None:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
    if not statmod.S_ISREG(st.st_mode) or st.st_nlink < 2:
        return None
    key = (st.st_dev, st.st_ino)
    for rule in rules:
        covered = _covered_inodes(session, rule)
        if covered is None or key in covered:
            return rule  # PERM-PATH-4 (None: too many files to tell, fail closed)
    return None


def _covered_inodes(session: Session, rule: Rule) -> set[tuple[int, int]] | None:
    """PERM-PATH-4: the multiply linked files ``rule`` covers; None past the walk limit."""
    if rule.specifier is None:
        return set()
    pattern = anchored_pattern(
        rule.specifier.rstrip("/") or "/",
        root=session.root,
        cwd=session.original_cwd,
        home=session.home,
        behavior=rule.behavior,
    )
    literal: list[str] = []
    for component in pattern.split("/"):
        if _GLOB_CHARS & set(component):
            break
        literal.append(component)
    top = "/".join(literal) or "/"
    found: set[tuple[int, int]] = set()
    budget = HARDLINK_WALK_LIMIT  # read at each call (tests lower it)
    candidates: list[str] = [top] if os.path.isfile(top) else []
    walker = os.walk(top) if not candidates else iter(())
    for directory, _dirs, files in walker:
        budget -= len(files) + 1
        if budget < 0:
            return None
        candidates.extend(os.path.join(directory, name) for name in files)
    for candidate in candidates:
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        linked = statmod.S_ISREG(st.st_mode) and st.st_nlink > 1
        if linked and path_rule_applies(rule, path_forms(session, candidate)):
            found.add((st.st_dev, st.st_ino))
    return found


def argument_denied(ctx: ToolUseContext, argument: str) -> bool:
    """BASH-PERM-1: a command argument, taken as a path (FILE-PATH-1) relative to
    the context's cwd, matches a ``Read`` deny rule. An argument with a NUL is no path."""
    if paths.has_nul(argument):
        return False
    return matching_deny_rule(ctx.session, ctx.expand(argument), READ_RULES) is not None


def read_deny_in_force(session: Session) -> bool:
    """BASH-PERM-2: whether any ``Read`` deny rule with a path specifier is in force."""
    return any(
        rule.tool in READ_RULES and rule.specifier is not None
        for rule in session_rules(session, "deny")
    )


def read_guard(ctx: ToolUseContext) -> ReadGuard:
    """BASH-PERM-1 and BASH-PERM-2: the context's ``Read`` deny rules for Bash's checks."""
    return ReadGuard(
        active=read_deny_in_force(ctx.session),
        denied=lambda argument: argument_denied(ctx, argument),
        cwd=ctx.cwd,
    )


def open_guard(ctx: ToolUseContext) -> fileio.OpenGuard | None:
    """FILE-OPEN-1: the checks a call's opened files go through; None without deny rules.

    A file opened for reading is refused when its real path (or, with several
    links, its identity, PERM-PATH-4) is covered by a ``Read`` deny rule; a
    write when the real path it creates or replaces is covered by an ``Edit``
    or ``Read`` deny rule (PERM-READDENY-1: ``Read``'s only where the session's
    profile has it apply, so not to a file 2.1.88's profile creates).
    """
    session = ctx.session
    deny = session_rules(session, "deny")
    if not any(rule.specifier is not None and rule.tool in EDIT_RULES for rule in deny):
        return None

    def refuse(path: str, rule: Rule) -> None:
        raise errors.OpenedFileDeniedError(
            f"{path} is covered by a deny rule in your permission settings ({rule.text}); "
            "a link changed after the path was checked, so nothing was read or written."
        )

    def read(real: str, st: os.stat_result) -> None:
        rules = [rule for rule in deny if rule.tool in READ_RULES]
        forms = path_forms(session, real)
        rule = next((r for r in rules if path_rule_applies(r, forms)), None)
        rule = rule or hardlink_rule(session, real, rules, st)
        if rule is not None:
            refuse(real, rule)

    def write(real: str) -> None:
        # PERM-READDENY-1 under the session's profile, as the path check decided it
        rule = matching_deny_rule(session, real, edit_rule_tools(session, real))
        if rule is not None:
            refuse(real, rule)

    return fileio.OpenGuard(read=read, write=write)
