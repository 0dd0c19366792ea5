"""Behaviour profiles as the suite sees them (SPEC.md 0.5): names and applicability.

The suite names the profiles SPEC.md defines; which variants each one plays
is the implementation's business (the reference's is ``reference.profiles``).
A scenario holds under every profile unless its ``profiles`` field names
some (PROFILE-SCENARIO-1); a run judges one profile (``toolconf run
--profile``), and the implementation says in ``hello`` which it plays
(PROTO-HELLO-2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILE_NAMES",
    "holds_under",
    "placeholders_of",
    "played_profiles",
]

PROFILE_NAMES: Final = ("documented", "claude-code-2.1.88", "claude-code-latest")
"""PROFILE-SET-1: every profile SPEC.md defines, the default first."""
DEFAULT_PROFILE: Final = PROFILE_NAMES[0]

_STATE_NOTE: Final = " (file state is current in your context \u2014 no need to Read it back)"
PLACEHOLDERS: Final[Mapping[str, Mapping[str, str]]] = {
    "claude-code-latest": {"{state_note}": _STATE_NOTE, "{notebook_end}": "\n"},
}
"""PROFILE-SCENARIO-2: what a profile's placeholders stand for, where not empty.

``{state_note}`` is what the profile appends to a successful Write's or Edit's
text (WRITE-RESULT-1, EDIT-RESULT-1), so a scenario about something else can
name that text under every profile; ``{notebook_end}`` what ends a notebook
NotebookEdit wrote (NBEDIT-WRITE-1)."""


def placeholders_of(profile: str) -> dict[str, str]:
    """PROFILE-SCENARIO-2: every profile placeholder and its value under ``profile``."""
    names = {name for table in PLACEHOLDERS.values() for name in table}
    own = PLACEHOLDERS.get(profile, {})
    return {name: own.get(name, "") for name in sorted(names)}


def holds_under(profiles: Iterable[str], profile: str) -> bool:
    """PROFILE-SCENARIO-1: a scenario's ``profiles`` (empty: all) include ``profile``."""
    chosen = tuple(profiles)
    return not chosen or profile in chosen


def played_profiles(hello: Mapping[str, Any]) -> tuple[str, ...]:
    """PROTO-HELLO-2: the profiles a hello answer says the implementation plays.

    Without a ``profiles`` field it plays the documented contract only.
    """
    listed = hello.get("profiles")
    if not isinstance(listed, list):
        return (DEFAULT_PROFILE,)
    return tuple(str(name) for name in listed)
