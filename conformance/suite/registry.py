"""The suite's own data files and where they are: SPEC.md, features, exclusions.

Each loader takes a path, so ``lint`` and its tests can point at other trees.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from conformance.errors import Problem
from conformance.suite.yamlsource import load_located

__all__ = [
    "DEFAULT_BEHAVIOURS",
    "DEFAULT_CODE",
    "DEFAULT_EXCLUDED",
    "DEFAULT_FEATURES",
    "DEFAULT_FIXTURES",
    "DEFAULT_SCENARIOS",
    "DEFAULT_SPEC",
    "DEFAULT_UNCITED",
    "PACKAGED_DATA",
    "load_reasons",
]

_PACKAGE = Path(__file__).resolve().parents[1]
PACKAGED_DATA: Final = _PACKAGE / "_data"
"""Where a built wheel carries the repository's ``SPEC.md``, ``spec/`` (its evidence and
annexes) and ``fixtures/`` (copied there by ``setup.py`` at build time); absent in a
source checkout."""


def _shipped(name: str) -> Path:
    """``name`` from the wheel's ``_data`` when installed, else from the repository root."""
    packaged = PACKAGED_DATA / name
    return packaged if packaged.exists() else _PACKAGE.parent / name


DEFAULT_SCENARIOS: Final = _PACKAGE / "scenarios"
DEFAULT_FEATURES: Final = _PACKAGE / "features.yaml"
DEFAULT_BEHAVIOURS: Final = _PACKAGE / "behaviours.yaml"
"""The behaviours a user asks about, each a named set of scenarios (``suite.behaviours``)."""
DEFAULT_EXCLUDED: Final = _PACKAGE / "excluded.yaml"
DEFAULT_SPEC: Final = _shipped("SPEC.md")
DEFAULT_FIXTURES: Final = _shipped("fixtures")
"""The hook scripts, images, PDFs and notebooks ``{fixtures}`` expands to."""
DEFAULT_UNCITED: Final = _PACKAGE / "uncited.yaml"
DEFAULT_CODE: Final = _PACKAGE.parent / "reference"


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
