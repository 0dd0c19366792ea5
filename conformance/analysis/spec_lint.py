"""The lint's checks of SPEC.md's shape, its evidence and its profile annexes (SPEC.md 0.2, 0.5).

- every evidence key is a requirement ID of the section its file is for, and
  every requirement has exactly one entry (a second one is a load problem);
- an item has a ``Decision:`` exactly when its entry gives a ``decision``;
- every source an entry cites is listed in ``sources.yaml``, a ``documented``
  entry cites a seed or a public source and a ``measured`` one a measurement;
- every scenario an entry names exists;
- no item is over 12 lines (``conformance.suite.spec.wrapped_length``) or
  carries more than one ``Rationale:``/``Decision:``, and none keeps a
  ``Profiles:`` line (they are the annexes' now);
- neither SPEC.md nor an evidence file points into a seed or the research
  notes by file and line (``seed 002 line 77``): name the source by its key
  and paraphrase it;
- the profile table and the evidence's ``profiles:`` statements agree (a
  statement for each ID the table varies, ``open`` exactly where the table
  says so, none for an ID it does not vary), and every annex is the one
  ``render_annex`` makes (``python -m conformance spec annexes`` rewrites them).

Strictness: with ``strict`` every top-level section needs its evidence file
and SPEC.md is searched for pointers as a whole; without it the checks cover
the sections that have an evidence file (the other sections are converted one
by one), and nothing is checked when SPEC.md has no ``spec/`` directory
beside it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.errors import Problem
from conformance.suite.annexes import ANNEX_COMMAND, render_annex
from conformance.suite.evidence import OPEN, EvidenceEntry
from conformance.suite.spec import Requirement, Spec, annex_name
from reference.profiles import DOCUMENTED, PROFILES, varying_ids

__all__ = [
    "ITEM_LINES",
    "STRICT",
    "ProfileTable",
    "check_spec",
    "reference_profiles",
    "write_annexes",
]

STRICT: Final = True
"""Whether ``check_spec`` holds every section of SPEC.md to the evidence rules when not
told otherwise; ``lint`` decides per tree (strict for the shipped SPEC.md)."""
ITEM_LINES: Final = 12

_POINTERS: Final = (
    re.compile(r"\b\d{3}_[0-9a-f]{16}\.txt\b"),
    re.compile(r"\bseeds?\s+\d{3}\b[^.;]{0,80}?\blines?\s+\d", re.IGNORECASE),
    re.compile(r"\bpublic facts\b[^.;]{0,40}?\blines?\s+\d", re.IGNORECASE),
    re.compile(r"\bclaude-code-public-facts\.md\b"),
)
_PROFILES_LINE = re.compile(r"^\s*Profiles:", re.MULTILINE)
_DOCUMENTED_KINDS: Final = frozenset({"seed", "public"})


@dataclass(frozen=True, slots=True)
class ProfileTable:
    """One profile as its table says: the release it plays and ID -> ``open``/``variant``."""

    version: str | None
    varying: Mapping[str, str]


def reference_profiles() -> dict[str, ProfileTable]:
    """Every profile but ``documented``, from the reference's table (``reference.profiles``)."""
    return {
        name: ProfileTable(profile.version, varying_ids(profile))
        for name, profile in PROFILES.items()
        if name != DOCUMENTED.name
    }


def write_annexes(spec: Spec, profiles: Mapping[str, ProfileTable]) -> list[Path]:
    """Write every profile's annex beside SPEC.md; returns the files whose text changed."""
    if spec.annex_dir is None:
        raise ValueError("the SPEC was not loaded from a file: no place for its annexes")
    spec.annex_dir.mkdir(parents=True, exist_ok=True)
    changed: list[Path] = []
    for name, table in profiles.items():
        path = spec.annex_dir / annex_name(name)
        text = render_annex(spec, name, table.varying, version=table.version)
        if spec.annex_text(name) != text:
            path.write_text(text, "utf-8")
            changed.append(path)
    return changed


def check_spec(
    spec: Spec,
    profiles: Mapping[str, ProfileTable],
    *,
    strict: bool = STRICT,
    scenario_ids: Collection[str] | None = None,
) -> list[Problem]:
    """Every problem of the module docstring's list, unsorted."""
    if not strict and (spec.annex_dir is None or not spec.annex_dir.is_dir()):
        return []
    evidence = spec.evidence
    problems = list(evidence.problems)
    tops = {s.number: s for s in spec.top_sections()}
    checked = set(tops) if strict else set(evidence.sections())
    for number, path in evidence.files.items():
        if number not in tops:
            problems.append(Problem(str(path), None, "", f"SPEC.md has no section {number}"))
    if strict:
        for number, section in tops.items():
            if number not in evidence.files and spec.in_section(number):
                message = f"section {section.heading} has no evidence file"
                problems.append(Problem(spec.file, section.line, "", message))
    problems += _keys(spec)
    items = [r for r in spec if r.top is not None and r.top.number in checked]
    for requirement in items:
        problems += _item(spec, requirement)
    problems += _citations(spec, scenario_ids)
    problems += _pointers(spec, items, whole=strict)
    problems += _profiles(spec, profiles, checked)
    problems += _annexes(spec, profiles)
    return problems


def _keys(spec: Spec) -> list[Problem]:
    """Each key of a section's file is an ID SPEC.md defines in that section."""
    problems: list[Problem] = []
    for number, keys in spec.evidence.keys.items():
        file = str(spec.evidence.files[number])
        for key, line in keys:
            requirement = spec.requirements.get(key)
            if requirement is None:
                message = f"not a requirement of {Path(spec.file).name}"
                problems.append(Problem(file, line, key, message))
            elif requirement.top is None or requirement.top.number != number:
                where = f"section {requirement.top.heading}" if requirement.top else "the preamble"
                message = f"defined in {where}, not in section {number}"
                problems.append(Problem(file, line, key, message))
    return problems


def _item(spec: Spec, requirement: Requirement) -> list[Problem]:
    """One item of a checked section: its entry, its Decision, its length, its notes."""
    problems: list[Problem] = []

    def at_item(message: str) -> None:
        problems.append(Problem(spec.file, requirement.line, requirement.id, message))

    entry = spec.evidence.entries.get(requirement.id)
    if entry is None:
        if requirement.id not in spec.evidence.where:  # else its entry failed to load
            at_item("no evidence entry (every ID has one, with its provenance)")
    elif requirement.is_decision and entry.decision is None:
        at_item("a Decision without a `decision` in its evidence entry")
    elif not requirement.is_decision and entry.decision is not None:
        at_item("its evidence entry gives a `decision`, but the item has no `Decision:`")
    if requirement.length > ITEM_LINES:
        at_item(f"{requirement.length} lines; an item has at most {ITEM_LINES}")
    if requirement.notes > 1:
        at_item("more than one Rationale:/Decision: sentence")
    if _PROFILES_LINE.search(requirement.text):
        at_item("a `Profiles:` line: state the variant under `profiles:` in its evidence")
    return problems


def _citations(spec: Spec, scenario_ids: Collection[str] | None) -> list[Problem]:
    """Cited sources are listed and fit the provenance; named scenarios exist."""
    problems: list[Problem] = []
    sources = spec.evidence.sources
    for key, entry in spec.evidence.entries.items():
        file, line = spec.evidence.where[key]

        def at_entry(message: str, key: str = key, file: str = file, line: int = line) -> None:
            problems.append(Problem(file, line, key, message))

        for citation in entry.sources:
            if citation.source not in sources:
                at_entry(f"cites {citation.source!r}, which sources.yaml does not list")
        kinds = {sources[c.source].kind for c in entry.sources if c.source in sources}
        if entry.provenance == "documented" and not kinds & _DOCUMENTED_KINDS:
            at_entry("documented, but cites no seed and no public source")
        if entry.provenance == "measured" and "measurement" not in kinds:
            at_entry("measured, but cites no measurement")
        if scenario_ids is not None:
            for name in sorted(set(_scenarios(entry)) - set(scenario_ids)):
                at_entry(f"names the scenario {name!r}, which does not exist")
    return problems


def _scenarios(entry: EvidenceEntry) -> Iterable[str]:
    for citation in entry.sources:
        yield from citation.scenarios
    for statement in entry.profiles.values():
        yield from statement.scenarios


def _pointers(spec: Spec, items: list[Requirement], *, whole: bool) -> list[Problem]:
    """No file-and-line pointer into a seed or the research notes."""
    problems: list[Problem] = []
    texts = [(spec.file, 1, spec.text)] if whole else [(spec.file, r.line, r.text) for r in items]
    texts += [(file, 1, text) for file, text in spec.evidence.texts.items()]
    for file, first, text in texts:
        for pattern in _POINTERS:
            for match in pattern.finditer(text):
                line = first + text.count("\n", 0, match.start())
                message = (
                    f"{match[0]!r} points into a document by file and line: name the source "
                    "(sources.yaml) and paraphrase it"
                )
                problems.append(Problem(file, line, "", message))
    return problems


def _profiles(
    spec: Spec, profiles: Mapping[str, ProfileTable], checked: Collection[str]
) -> list[Problem]:
    """The table's varying IDs and the evidence's ``profiles:`` statements agree."""
    problems: list[Problem] = []
    evidence = spec.evidence
    for name, table in profiles.items():
        for requirement_id, kind in sorted(table.varying.items()):
            requirement = spec.requirements.get(requirement_id)
            if requirement is None:
                message = f"the profile table varies {requirement_id} under {name}: not in SPEC.md"
                problems.append(Problem(spec.file, None, requirement_id, message))
                continue
            if requirement.top is None or requirement.top.number not in checked:
                continue
            entry = evidence.entries.get(requirement_id)
            if entry is None:
                continue  # reported with the item
            file, line = evidence.where[requirement_id]
            statement = entry.profiles.get(name)
            if statement is None:
                message = f"the profile table varies it under {name} ({kind}): state it"
                problems.append(Problem(file, line, f"{requirement_id}.profiles", message))
            elif statement.is_open != (kind == OPEN):
                said = "open" if statement.is_open else "a variant"
                message = f"says {said} under {name}; the profile table says {kind}"
                problems.append(Problem(file, line, f"{requirement_id}.profiles.{name}", message))
    for requirement_id, entry in evidence.entries.items():
        file, line = evidence.where[requirement_id]
        for name in entry.profiles:
            known = profiles.get(name)
            if known is None:
                message = f"{name!r} is not a profile with an annex ({', '.join(profiles)})"
            elif requirement_id not in known.varying:
                message = f"the profile table does not vary it under {name}"
            else:
                continue
            problems.append(Problem(file, line, f"{requirement_id}.profiles.{name}", message))
    return problems


def _annexes(spec: Spec, profiles: Mapping[str, ProfileTable]) -> list[Problem]:
    """Every annex is present and current, and no annex is of an unknown profile."""
    if spec.annex_dir is None:
        return []
    problems: list[Problem] = []
    for name, table in profiles.items():
        path = spec.annex_dir / annex_name(name)
        expected = render_annex(spec, name, table.varying, version=table.version)
        on_disk = spec.annex_text(name)
        if on_disk != expected:
            state = "missing" if on_disk is None else "stale"
            message = f"the annex of {name} is {state}: run `{ANNEX_COMMAND}`"
            problems.append(Problem(str(path), None, "", message))
    known = {annex_name(name) for name in profiles}
    for path in sorted(spec.annex_dir.glob(annex_name("*"))):
        if path.name not in known:
            problems.append(Problem(str(path), None, "", "an annex of no profile"))
    return problems
