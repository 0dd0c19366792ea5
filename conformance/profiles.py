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

__all__ = ["DEFAULT_PROFILE", "PROFILE_NAMES", "holds_under", "played_profiles"]

PROFILE_NAMES: Final = ("documented", "claude-code-2.1.88", "claude-code-latest")
"""PROFILE-SET-1: every profile SPEC.md defines, the default first."""
DEFAULT_PROFILE: Final = PROFILE_NAMES[0]


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
