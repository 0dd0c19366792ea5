"""A hook matcher group's ``matcher`` tested against a tool's name (SPEC.md HOOK-MATCH-1).

Three forms: absent, ``""`` or ``*`` match every tool; a matcher made only of
letters, digits, ``_``, ``-``, spaces, ``,`` and ``|`` is a list of exact names;
anything else is an unanchored regular expression (``re.search``). A matcher
that is not a valid expression, or not a string at all, matches nothing.
"""

from __future__ import annotations

import functools
import re
from typing import Final

# HOOK-MATCH-1: ASCII letters and digits, as JavaScript's [A-Za-z0-9] reads them.
_EXACT_LIST: Final = re.compile(r"[A-Za-z0-9_\- ,|]+")
_SEPARATORS: Final = re.compile(r"[|,]")
_PIPE_LIST: Final = re.compile(r"[A-Za-z0-9_\-|]+")
"""HOOK-MATCH-1 where a profile's release takes no spaces or commas in a list matcher."""


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return None  # HOOK-MATCH-1: an invalid expression matches nothing


@functools.lru_cache(maxsize=256)
def _exact_names(matcher: str) -> frozenset[str]:
    return frozenset(name.strip() for name in _SEPARATORS.split(matcher))


def matcher_matches(matcher: object, tool_name: str, *, spaced_lists: bool = True) -> bool:
    """Whether a group with this ``matcher`` applies to the tool called ``tool_name``.

    ``tool_name`` is the tool's own name (REG-LOOKUP-1), never an alias.
    ``None`` stands for an absent matcher (JSON ``null`` reads the same).
    ``spaced_lists`` false: a list matcher is names and ``|`` alone, so one with spaces
    or commas is a regular expression (the session's profile decides, HOOK-MATCH-1).
    """
    if matcher is None or matcher in ("", "*"):  # HOOK-MATCH-1: match all
        return True
    if not isinstance(matcher, str):
        return False
    exact = _EXACT_LIST if spaced_lists else _PIPE_LIST
    if exact.fullmatch(matcher):  # HOOK-MATCH-1: exact names split on | or ,
        return tool_name in _exact_names(matcher)
    pattern = _compiled(matcher)  # HOOK-MATCH-1: unanchored regular expression
    return pattern is not None and pattern.search(tool_name) is not None
