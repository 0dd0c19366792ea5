"""The suite's own data files: SPEC.md requirement IDs, features, exclusions.

Each loader takes a path, so ``lint`` and its tests can point at other trees.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.errors import Problem
from conformance.suite.yamlsource import load_located

__all__ = [
    "DEFAULT_CODE",
    "DEFAULT_EXCLUDED",
    "DEFAULT_FEATURES",
    "DEFAULT_FIXTURES",
    "DEFAULT_SCENARIOS",
    "DEFAULT_SPEC",
    "DEFAULT_UNCITED",
    "PACKAGED_DATA",
    "Requirement",
    "load_reasons",
    "parse_spec",
    "spec_features",
]

_PACKAGE = Path(__file__).resolve().parents[1]
PACKAGED_DATA: Final = _PACKAGE / "_data"
"""Where a built wheel carries the repository's ``SPEC.md`` and ``fixtures/``
(copied there by ``setup.py`` at build time); absent in a source checkout."""


def _shipped(name: str) -> Path:
    """``name`` from the wheel's ``_data`` when installed, else from the repository root."""
    packaged = PACKAGED_DATA / name
    return packaged if packaged.exists() else _PACKAGE.parent / name


DEFAULT_SCENARIOS: Final = _PACKAGE / "scenarios"
DEFAULT_FEATURES: Final = _PACKAGE / "features.yaml"
DEFAULT_EXCLUDED: Final = _PACKAGE / "excluded.yaml"
DEFAULT_SPEC: Final = _shipped("SPEC.md")
DEFAULT_FIXTURES: Final = _shipped("fixtures")
"""The hook scripts, images, PDFs and notebooks ``{fixtures}`` expands to."""
DEFAULT_UNCITED: Final = _PACKAGE / "uncited.yaml"
DEFAULT_CODE: Final = _PACKAGE.parent / "reference"

# SPEC.md 0.1: a requirement is a list item opening with **ID** (LEVEL).
_REQUIREMENT = re.compile(
    r"^[ \t]*[-*][ \t]+"
    r"\*\*(?P<id>[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-[0-9]+)\*\*"
    r"[ \t]+\((?P<level>MUST|SHOULD|MAY)\)",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement of SPEC.md, with the line it is defined on."""

    id: str
    level: str
    line: int


def parse_spec(text: str, file: str = "SPEC.md") -> tuple[dict[str, Requirement], list[Problem]]:
    """Requirement IDs defined in SPEC.md text; a second definition of an ID is a problem."""
    found: dict[str, Requirement] = {}
    problems: list[Problem] = []
    for m in _REQUIREMENT.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        requirement = Requirement(m["id"], m["level"], line)
        if requirement.id in found:
            first = found[requirement.id].line
            problems.append(
                Problem(file, line, requirement.id, f"defined twice (first on line {first})")
            )
            continue
        found[requirement.id] = requirement
    return found, problems


_FEATURE_ROW = re.compile(r"^\|\s*`(?P<name>[a-z][a-z0-9_]*)`")


def spec_features(text: str) -> set[str] | None:
    """Feature names from the table that follows PROTO-FEATURES-1, or None without one."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "**PROTO-FEATURES-1**" in line), None)
    if start is None:
        return None
    names: set[str] = set()
    for line in lines[start + 1 :]:
        if names and not line.startswith("|"):
            break
        if m := _FEATURE_ROW.match(line):
            names.add(m["name"])
    return names or None


def load_reasons(path: Path, what: str) -> tuple[dict[str, str], dict[str, int], list[Problem]]:
    """A YAML mapping of name -> non-empty one-line text (features.yaml, excluded.yaml,
    expected-failures files); returns the mapping, the line of each key, and problems.
    """
    file = str(path)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        return {}, {}, [Problem(file, None, "", f"cannot read {what}: {exc}")]
    located, problems = load_located(text, file)
    if located is None:
        if problems and problems[0].message == "the file is empty":
            return {}, {}, []
        return {}, {}, problems
    if not isinstance(located.data, Mapping):
        return {}, {}, [Problem(file, 1, "", f"{what} must be a mapping of name -> reason")]
    entries: dict[str, str] = {}
    lines: dict[str, int] = {}
    for key, value in located.data.items():
        line = located.key_line((key,)) or 1
        if not isinstance(value, str) or not value.strip():
            problems.append(
                Problem(file, line, key, f"{what}: needs a non-empty text, got {value!r}")
            )
            continue
        entries[key] = value
        lines[key] = line
    return entries, lines, problems
