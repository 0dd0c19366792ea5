"""The pieces a definition names as ``"module:attr"``, and what each must provide.

A capability an agent has beyond the six tools with every call allowed is
code of the agent's own, named by its definition (``definition``), so the
connector stays one for every agent:

- a **settings mapper** (``permissions.settings``) turns a session's
  settings sources into the files and command-line arguments the agent reads
  (``SettingsMapper``). It is called at ``begin``, before anything starts: a
  source, rule or hook it has no counterpart for raises ``Unmappable``
  (PROTO-UNSUPPORTED-1) and the scenario is not applicable. Its paths and
  arguments may use the launch placeholders (``{work}``, ``{home}``, ...),
  which are expanded when the agent starts; file contents are written as
  they are;
- a **transcript** (``transcript``) reads the agent's stdout, line by line,
  for what the model's next request does not carry: each call's structured
  result, the results of a turn after which the agent ended the
  conversation, and its last words (``Transcript``).

``load_piece`` imports a piece; a piece that cannot be loaded is a
``ConformanceError`` naming the definition's key.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from conformance.errors import ConformanceError

__all__ = [
    "SettingsContext",
    "SettingsMapper",
    "SettingsPlan",
    "Transcript",
    "TranscriptFactory",
    "load_piece",
]


@dataclass(frozen=True, slots=True)
class SettingsContext:
    """What a settings mapper knows of the session: its root and cwd, and the launch env.

    ``env`` is the definition's launch environment as written (placeholders
    unexpanded), so a mapper finds where the agent reads its configuration
    (Claude Code: ``CLAUDE_CONFIG_DIR``) without a second copy of it.
    """

    root: str
    cwd: str
    env: Mapping[str, str]


@dataclass(slots=True)
class SettingsPlan:
    """Files to write (path → JSON value) and arguments to add to the agent's command line."""

    files: dict[str, Any] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)


class SettingsMapper(Protocol):
    """Gives an agent a session's settings (``begin``'s ``settings``, by source)."""

    def __call__(self, settings: Mapping[str, Any], context: SettingsContext) -> SettingsPlan:
        """The files and arguments that give the agent ``settings``.

        Raises:
            Unmappable: a source or a part of one the agent has no counterpart for.
        """
        ...


class Transcript(Protocol):
    """A reader of one agent process's stdout (fed from a reader thread)."""

    def feed(self, line: str) -> None:
        """Take one line of stdout."""
        ...

    def results(self, ids: Sequence[str], wait: float) -> dict[str, Mapping[str, Any]]:
        """The tool_result blocks stdout showed for ``ids``, waiting up to ``wait`` seconds
        for all of them."""
        ...

    def structured(self, ids: Sequence[str]) -> dict[str, Any]:
        """The structured result of each of ``ids`` stdout gave one for."""
        ...

    def last_words(self) -> str | None:
        """What the agent said last (its final record), or None when it said nothing."""
        ...


TranscriptFactory = Callable[[], Transcript]
"""Makes the transcript of one agent process."""


def load_piece(target: str, key: str) -> Any:
    """``module:attr``, imported.

    Raises:
        ConformanceError: the module or the attribute cannot be loaded.
    """
    module_name, _, attr = target.partition(":")
    try:
        found = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ConformanceError(
            f"the definition's {key} {target!r} cannot be loaded: {exc}"
        ) from exc
    return found
