"""The one model of SPEC.md: its sections, its requirement items, their evidence.

SPEC-ID-1: a requirement is a list item opening with a bold ID and its level,
``- **AREA-TOPIC-N** (MUST)``. An item runs from that line over the indented
lines and table rows that follow it (blank lines between them included) and
ends at the next item, the next heading, or a line of prose at the left margin.
Sections are the ``##`` (top-level, ``## 12. Read``) and ``###`` (``### 12.4
Dedup ...``) headings with a number.

The evidence (``spec/evidence/``) and the profile annexes (``spec/annex-*.md``)
sit beside SPEC.md in a ``spec/`` directory, in the repository and in the
wheel alike; ``Spec.load`` reads all three.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Final

from conformance.errors import Problem
from conformance.suite.evidence import EvidenceSet, Provenance, load_evidence

__all__ = [
    "EVIDENCE_DIR",
    "SPEC_DIR",
    "Requirement",
    "Section",
    "Spec",
    "annex_name",
    "wrapped_length",
]

SPEC_DIR: Final = "spec"
"""Beside SPEC.md: the evidence directory and the annexes."""
EVIDENCE_DIR: Final = "evidence"

_REQUIREMENT = re.compile(
    r"^[ \t]*[-*][ \t]+"
    r"\*\*(?P<id>[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-[0-9]+)\*\*"
    r"[ \t]+\((?P<level>MUST|SHOULD|MAY)\)"
)
_HEADING = re.compile(r"^(?P<marks>#{2,3}) (?P<number>\d+(?:\.\d+)?)\.? (?P<title>.+)$")
_DECISION = re.compile(r"(?:^|[\s(])(?:\*\*)?Decision:")
_NOTE = re.compile(r"(?:^|[\s(])(?:\*\*)?(?:Decision|Rationale):")
_FEATURE_ROW = re.compile(r"^\|\s*`(?P<name>[a-z][a-z0-9_]*)`")
_WRAP: Final = 80
_LONG: Final = 100


def wrapped_length(lines: list[str]) -> int:
    """An item's length in lines wrapped at about 80 columns: blank lines and table rows
    count nothing, a line up to 100 columns counts one, a longer one as if wrapped at 80.
    """
    total = 0
    for line in lines:
        text = line.rstrip()
        if not text or text.lstrip().startswith("|"):
            continue
        total += 1 if len(text) <= _LONG else math.ceil(len(text) / _WRAP)
    return total


def annex_name(profile: str) -> str:
    """The file name of ``profile``'s annex in ``spec/`` (SPEC.md 0.5)."""
    return f"annex-{profile}.md"


@dataclass(frozen=True, slots=True)
class Section:
    """One numbered heading: ``number`` ``"12.4"``, ``title`` ``"Dedup of unchanged re-reads"``."""

    number: str
    title: str
    depth: int
    """2 for a top-level (``##``) section, 3 for a subsection."""
    line: int

    @property
    def top(self) -> str:
        """The number of the top-level section this one is, or is in (``"12"``)."""
        return self.number.split(".", 1)[0]

    @property
    def label(self) -> str:
        """``12.4 Dedup of unchanged re-reads``; ``12 Read`` for a top-level one."""
        return f"{self.number} {self.title}"

    @property
    def heading(self) -> str:
        """The heading's text as written: ``12. Read``, ``12.4 Dedup of unchanged re-reads``."""
        return f"{self.number}. {self.title}" if self.depth == 2 else self.label


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement item of SPEC.md (SPEC-ID-1)."""

    id: str
    level: str
    """MUST, SHOULD or MAY."""
    line: int
    """The line the item starts on (its ID)."""
    last_line: int
    text: str
    """The item's lines as written, its first line's ``- **ID** (LEVEL)`` included."""
    section: Section | None
    """The innermost section it is in; None before the first heading."""
    top: Section | None
    """The top-level section it is in."""

    @property
    def is_decision(self) -> bool:
        """The item carries a ``Decision:`` (SPEC.md 0.1)."""
        return _DECISION.search(self.text) is not None

    @property
    def notes(self) -> int:
        """How many ``Rationale:`` or ``Decision:`` sentences the item carries."""
        return len(_NOTE.findall(self.text))

    @property
    def length(self) -> int:
        """The item's length in lines (``wrapped_length``)."""
        return wrapped_length(self.text.split("\n"))


@dataclass(frozen=True)
class Spec:
    """SPEC.md parsed once, with the evidence and annexes beside it."""

    text: str
    file: str = "SPEC.md"
    evidence: EvidenceSet = field(default_factory=EvidenceSet)
    annex_dir: Path | None = None
    """Where the annexes live (``spec/`` beside SPEC.md), when loaded from a file."""

    @classmethod
    def load(cls, path: Path) -> Spec:
        """SPEC.md at ``path``, with ``spec/evidence/`` beside it (absent: no evidence)."""
        directory = path.parent / SPEC_DIR
        return cls(
            text=path.read_text("utf-8"),
            file=str(path),
            evidence=load_evidence(directory / EVIDENCE_DIR),
            annex_dir=directory,
        )

    @cached_property
    def _parsed(self) -> tuple[tuple[Section, ...], dict[str, Requirement], tuple[Problem, ...]]:
        lines = self.text.split("\n")
        sections: list[Section] = []
        found: dict[str, Requirement] = {}
        problems: list[Problem] = []
        current: Section | None = None
        top: Section | None = None
        index = 0
        while index < len(lines):
            line = lines[index]
            heading = _HEADING.match(line)
            if heading:
                current = Section(
                    number=heading["number"],
                    title=heading["title"].strip(),
                    depth=len(heading["marks"]),
                    line=index + 1,
                )
                sections.append(current)
                if current.depth == 2:
                    top = current
                index += 1
                continue
            match = _REQUIREMENT.match(line)
            if match is None:
                index += 1
                continue
            last = _item_end(lines, index)
            requirement = Requirement(
                id=match["id"],
                level=match["level"],
                line=index + 1,
                last_line=last + 1,
                text="\n".join(lines[index : last + 1]),
                section=current,
                top=top,
            )
            if requirement.id in found:
                first = found[requirement.id].line
                message = f"defined twice (first on line {first})"
                problems.append(Problem(self.file, requirement.line, requirement.id, message))
            else:
                found[requirement.id] = requirement
            index += 1  # an item nested in another's lines is still an item of its own
        return tuple(sections), found, tuple(problems)

    @property
    def sections(self) -> tuple[Section, ...]:
        """Every numbered section, in document order."""
        return self._parsed[0]

    @property
    def requirements(self) -> Mapping[str, Requirement]:
        """ID -> its (first) definition, in document order."""
        return self._parsed[1]

    @property
    def problems(self) -> tuple[Problem, ...]:
        """What the document itself gets wrong: an ID defined twice."""
        return self._parsed[2]

    def __iter__(self) -> Iterator[Requirement]:
        return iter(self.requirements.values())

    def top_sections(self) -> list[Section]:
        """The top-level sections, in document order."""
        return [s for s in self.sections if s.depth == 2]

    def section_labels(self) -> dict[str, str]:
        """ID -> the label of its innermost section (``12.4 Dedup ...``), or ``preamble``."""
        return {r.id: r.section.label if r.section is not None else "preamble" for r in self}

    def in_section(self, number: str) -> list[Requirement]:
        """The requirements of top-level section ``number``, in document order."""
        return [r for r in self if r.top is not None and r.top.number == number]

    def provenance_of(self, requirement_id: str) -> Provenance:
        """Where the rule of ``requirement_id`` comes from: its evidence entry's provenance.

        Raises KeyError for an ID without an entry (see ``provenances`` for the IDs that
        have one).
        """
        return self.evidence.entries[requirement_id].provenance

    def provenances(self) -> dict[str, Provenance]:
        """ID -> provenance, for every requirement that has an evidence entry."""
        entries = self.evidence.entries
        return {r.id: entries[r.id].provenance for r in self if r.id in entries}

    def annex_path(self, profile: str) -> Path | None:
        """Where ``profile``'s annex is, when the document was loaded from a file."""
        return None if self.annex_dir is None else self.annex_dir / annex_name(profile)

    def annex_text(self, profile: str) -> str | None:
        """The annex of ``profile`` as it is on disk, or None when there is none."""
        path = self.annex_path(profile)
        if path is None or not path.is_file():
            return None
        return path.read_text("utf-8")

    def features(self) -> set[str] | None:
        """Feature names from the table that follows PROTO-FEATURES-1, or None without one."""
        lines = self.text.splitlines()
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


def _item_end(lines: list[str], start: int) -> int:
    """The index of an item's last line: indented lines and table rows continue it,
    across blank lines; a heading, another item or prose at the margin ends it.
    """
    last = start
    index = start + 1
    while index < len(lines):
        line = lines[index]
        if _REQUIREMENT.match(line) or line.startswith("#"):
            break
        if not line.strip():
            index += 1
            continue
        if line[0] in " \t" or line.startswith("|"):
            last = index
            index += 1
            continue
        break
    return last
