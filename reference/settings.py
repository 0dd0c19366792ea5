"""Settings from every source, merged by the sources' priority.

The sources and their priority come from the seeds (PERM-SOURCE-1 of SPEC.md):
policySettings first, session last. List keys (permission rules, hooks) are
combined across sources; a scalar key takes the value of the first source, in
priority order, that sets it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeVar, cast, get_args

T = TypeVar("T")

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

MODE_SOURCES: Final = (
    "policySettings",
    "cliArg",
    "flagSettings",
    "localSettings",
    "projectSettings",
    "userSettings",
    "command",
    "session",
)
"""PERM-SOURCE-1: the order in which ``permissions.defaultMode`` is looked for."""
PROJECT_SOURCES: Final = frozenset({"projectSettings", "localSettings"})
"""The settings files of the project itself (``.claude/settings.json`` and
``.claude/settings.local.json``), as opposed to the user's and the command line's."""

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto"]
PERMISSION_MODES: Final[frozenset[str]] = frozenset(get_args(PermissionMode))  # PERM-MODE-1


@dataclass(frozen=True, slots=True)
class Settings:
    """One session's settings, keyed by source name."""

    by_source: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    _memo: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once per key: settings never change during a session.

        Parsed rules and hook handler lists are derived here instead of on
        every call (the dedup hit goes through the whole pipeline).
        """
        try:
            return cast(T, self._memo[key])
        except KeyError:
            value = self._memo[key] = compute()
            return value

    def scalar(self, key: str) -> Any:
        """The value of ``key`` from the highest-priority source that sets it."""
        for source in SOURCES:
            values = self.by_source.get(source) or {}
            if key in values:
                return values[key]
        return None

    def permission_values(
        self, key: str, order: tuple[str, ...] = SOURCES
    ) -> Iterator[tuple[str, Any]]:
        """``permissions.<key>`` of every source that sets it, sources in ``order``.

        A ``permissions`` value that is not an object is ignored (PERM-SOURCE-1).
        """
        for source in order:
            permissions = (self.by_source.get(source) or {}).get("permissions")
            if isinstance(permissions, Mapping) and key in permissions:
                yield source, permissions[key]

    def permission_entries(self, behavior: str) -> Iterator[tuple[str, str]]:
        """Every string of the ``permissions.<behavior>`` lists with its source.

        Sources in priority order, entries in list order (PERM-SOURCE-1); used
        for ``allow``, ``ask``, ``deny`` and ``additionalDirectories``. A value
        that is not a list, and an entry that is not a string, are ignored.
        """
        for source, entries in self.permission_values(behavior):
            if isinstance(entries, list | tuple):
                for entry in entries:
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
