"""Settings from every source, merged by the sources' priority.

The sources and their priority come from the seeds (PERM sections of SPEC.md):
policySettings first, session last. List keys (permission rules, hooks) are
combined across sources; a scalar key takes the value of the first source, in
priority order, that sets it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

SOURCES: Final = (
    "policySettings",
    "localSettings",
    "projectSettings",
    "userSettings",
    "flagSettings",
    "cliArg",
    "command",
    "session",
)


@dataclass(frozen=True, slots=True)
class Settings:
    """One session's settings, keyed by source name."""

    by_source: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def scalar(self, key: str) -> Any:
        """The value of ``key`` from the highest-priority source that sets it."""
        for source in SOURCES:
            values = self.by_source.get(source) or {}
            if key in values:
                return values[key]
        return None

    def permission_entries(self, behavior: str) -> Iterator[tuple[str, str]]:
        """Every ``permissions.<behavior>`` rule text with its source, in priority order."""
        for source in SOURCES:
            permissions = (self.by_source.get(source) or {}).get("permissions") or {}
            for entry in permissions.get(behavior) or []:
                if isinstance(entry, str):
                    yield source, entry


def positive_int(value: object) -> int | None:
    """A positive integer from an int or a decimal string; anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        number = int(value.strip())
        return number if number > 0 else None
    return None
