"""The evidence beside SPEC.md: what each rule rests on, keyed by ID (SPEC.md 0.2).

``spec/evidence/NN-SLUG.yaml`` holds one entry per ID of top-level section
NN; ``spec/evidence/sources.yaml`` names every source an entry may cite. The
shapes are pydantic models, so a malformed entry is reported with the field
pydantic names; the cross-file rules (an entry's key is an ID of its section,
a cited source is listed, a Decision has its reason) are the lint's.

A date may be written plainly (``2026-12-02``) or quoted; a release must be a
string (``"2.1.88"``), since YAML would read ``2.1`` as a number.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, model_validator

from conformance.errors import Problem

__all__ = [
    "OPEN",
    "PROVENANCES",
    "SOURCES_FILE",
    "Citation",
    "EvidenceEntry",
    "EvidenceSet",
    "ProfileStatement",
    "Provenance",
    "SourceInfo",
    "load_evidence",
]

Provenance = Literal["documented", "measured", "decided"]
PROVENANCES: Final[tuple[Provenance, ...]] = ("documented", "measured", "decided")
OPEN: Final = "open"
"""The variant of an ID a profile was measured to differ on and does not model."""
SOURCES_FILE: Final = "sources.yaml"

Text = Annotated[StrictStr, Field(min_length=1)]
_SECTION_FILE = re.compile(r"^(?P<number>[0-9]{2})-[a-z0-9]+(?:-[a-z0-9]+)*\.yaml$")


_M = TypeVar("_M", bound=BaseModel)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceInfo(_Model):
    """One source of ``sources.yaml``: what it is, by title (never by file and line)."""

    kind: Literal["seed", "public", "measurement", "project"]
    title: Text
    language: Text | None = None
    url: Text | None = None


class Citation(_Model):
    """One source an entry rests on and what it says there, paraphrased."""

    source: Text
    says: Text
    release: Text | None = None
    date: datetime.date | None = None
    ref: Text | None = None
    """Where in the source: a URL, an issue (``"#12345"``), a page anchor."""
    scenarios: tuple[Text, ...] = ()


class ProfileStatement(_Model):
    """What one profile plays for an ID: a variant, or ``open`` with its reason."""

    variant: Text
    """``open`` (PROFILE-OPEN-1), or one line saying what replaces the item's rule."""
    measured: Text
    """The release and date the variant was measured on, as ``"2.1.88, 2026-12-02"``."""
    because: Text | None = None
    """Why the ID is open: required for ``open``, and only there."""
    says: Text | None = None
    scenarios: tuple[Text, ...] = ()

    @model_validator(mode="after")
    def _because_iff_open(self) -> ProfileStatement:
        if self.is_open and self.because is None:
            raise ValueError("an `open` variant needs `because`")
        if not self.is_open and self.because is not None:
            raise ValueError("`because` is for an `open` variant; state the variant itself")
        return self

    @property
    def is_open(self) -> bool:
        """PROFILE-OPEN-1: the profile differs here and does not model it."""
        return self.variant == OPEN


class EvidenceEntry(_Model):
    """The evidence of one ID: its provenance, its sources, and what else was moved out."""

    provenance: Provenance
    sources: tuple[Citation, ...] = Field(min_length=1)
    decision: Text | None = None
    """The reason of the item's ``Decision:``; present exactly when the item has one."""
    history: Text | None = None
    """What this engine did before the rule, when it did otherwise."""
    profiles: Mapping[str, ProfileStatement] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EvidenceSet:
    """Every evidence file of a directory, loaded; empty when there is none."""

    entries: Mapping[str, EvidenceEntry] = field(default_factory=dict)
    """ID -> its entry (the first, when an ID has several: that is a problem)."""
    where: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    """ID -> the file and line of its entry."""
    keys: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    """Top-level section number (``"4"`` for ``04-permissions.yaml``) -> its file's keys,
    each with its line, in order (a key written twice is there twice)."""
    files: Mapping[str, Path] = field(default_factory=dict)
    """Section number -> its evidence file."""
    sources: Mapping[str, SourceInfo] = field(default_factory=dict)
    texts: Mapping[str, str] = field(default_factory=dict)
    """File -> its text, for the checks that read the raw words."""
    problems: tuple[Problem, ...] = ()

    def sections(self) -> frozenset[str]:
        """The top-level section numbers that have an evidence file."""
        return frozenset(self.files)


def load_evidence(directory: Path) -> EvidenceSet:
    """``sources.yaml`` and every ``NN-SLUG.yaml`` of ``directory`` (a missing directory
    is an empty set); problems are collected, never raised.
    """
    if not directory.is_dir():
        return EvidenceSet()
    problems: list[Problem] = []
    texts: dict[str, str] = {}
    sources: dict[str, SourceInfo] = {}
    sources_path = directory / SOURCES_FILE
    if sources_path.is_file():
        for key, value, line in _mapping(sources_path, texts, problems):
            info = _validated(
                SourceInfo, value, path=sources_path, line=line, key=key, problems=problems
            )
            if info is not None:
                sources[key] = info
    else:
        problems.append(Problem(str(sources_path), None, "", "the sources file is missing"))
    entries: dict[str, EvidenceEntry] = {}
    where: dict[str, tuple[str, int]] = {}
    keys: dict[str, tuple[tuple[str, int], ...]] = {}
    files: dict[str, Path] = {}
    for path in sorted(directory.glob("*.y*ml")):
        if path.name == SOURCES_FILE:
            continue
        match = _SECTION_FILE.match(path.name)
        if match is None:
            message = "an evidence file is named NN-SLUG.yaml, NN the section's number"
            problems.append(Problem(str(path), None, "", message))
            continue
        number = str(int(match["number"]))
        if number in files:
            message = f"a second evidence file for section {number} (first: {files[number].name})"
            problems.append(Problem(str(path), None, "", message))
            continue
        files[number] = path
        found: list[tuple[str, int]] = []
        for key, value, line in _mapping(path, texts, problems):
            found.append((key, line))
            if key in where:
                first, at = where[key]
                message = f"a second entry (first at {first}:{at})"
                problems.append(Problem(str(path), line, key, message))
                continue
            where[key] = (str(path), line)
            entry = _validated(
                EvidenceEntry, value, path=path, line=line, key=key, problems=problems
            )
            if entry is not None:
                entries[key] = entry
        keys[number] = tuple(found)
    return EvidenceSet(
        entries=entries,
        where=where,
        keys=keys,
        files=files,
        sources=sources,
        texts=texts,
        problems=tuple(problems),
    )


def _mapping(
    path: Path, texts: dict[str, str], problems: list[Problem]
) -> list[tuple[str, Any, int]]:
    """The top-level ``(key, value, line)`` of a YAML mapping file, duplicate keys included
    (plain YAML keeps only the last one, so they are read off the composed nodes).
    """
    file = str(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(file, None, "", f"cannot read: {exc}"))
        return []
    texts[file] = text
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return []
        if not isinstance(node, yaml.MappingNode):
            problems.append(Problem(file, node.start_mark.line + 1, "", "must be a mapping"))
            return []
        out: list[tuple[str, Any, int]] = []
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                problems.append(Problem(file, line, "", f"key {key!r} must be a string"))
                continue
            out.append((key, loader.construct_object(value_node, deep=True), line))
        return out
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else mark.line + 1
        problems.append(Problem(file, line, "", f"YAML syntax: {exc.problem or exc}"))
        return []
    except yaml.YAMLError as exc:
        problems.append(Problem(file, None, "", f"YAML: {exc}"))
        return []
    finally:
        loader.dispose()


def _validated(
    model: type[_M], value: Any, *, path: Path, line: int, key: str, problems: list[Problem]
) -> _M | None:
    """``value`` as ``model``, or None with one problem per pydantic error."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(part) for part in (key, *error["loc"]))
            problems.append(Problem(str(path), line, where, error["msg"]))
        return None
