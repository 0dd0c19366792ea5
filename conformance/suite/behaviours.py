"""The behaviours a user asks about (``behaviours.yaml``), each a named set of scenarios.

A behaviour is what a person choosing an agent wants to know in one line
("does Write refuse a file the model never read?"): a title, the question as
a user asks it, the SPEC.md IDs it rests on and the scenarios that show it.
How an implementation fares on one is judged in ``conformance.analysis.behaviour_table``;
here is only the data and its own consistency, which ``check_behaviours``
reports for the lint:

- every entry has the fields and shapes below, and its id is unique;
- every listed scenario exists and cites at least one of the behaviour's IDs
  (so a scenario cannot be filed under a behaviour it does not show);
- every ID exists in SPEC.md and is cited by at least one of the behaviour's
  scenarios (so the provenance the table states is earned by a scenario).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.errors import Problem
from conformance.suite.evidence import PROVENANCES, Provenance
from conformance.suite.yamlsource import Located, load_located

__all__ = [
    "FIELDS",
    "Behaviour",
    "check_behaviours",
    "load_behaviours",
    "provenance_of",
]

FIELDS: Final = ("id", "group", "title", "question", "spec", "scenarios")
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class Behaviour:
    """One named behaviour: what it is, the question it answers, its IDs and scenarios."""

    id: str
    group: str
    """The heading its row sits under (``Read before write``)."""
    title: str
    question: str
    spec: tuple[str, ...]
    scenarios: tuple[str, ...]
    line: int = 0
    """The line its entry starts on in the file, for problems."""


def load_behaviours(path: Path) -> tuple[list[Behaviour], list[Problem]]:
    """The behaviours of ``path`` in file order, and what is wrong with their shape."""
    file = str(path)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        return [], [Problem(file, None, "", f"cannot read the behaviours: {exc}")]
    located, problems = load_located(text, file)
    if located is None:
        return [], problems
    if not isinstance(located.data, list):
        return [], [Problem(file, 1, "", "the behaviours must be a list of entries")]
    behaviours: list[Behaviour] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(located.data):
        line = located.line_of((index,)) or 1
        behaviour = _entry(entry, index, located, file, problems)
        if behaviour is None:
            continue
        if behaviour.id in seen:
            message = f"defined twice (first on line {seen[behaviour.id]})"
            problems.append(Problem(file, line, behaviour.id, message))
            continue
        seen[behaviour.id] = line
        behaviours.append(behaviour)
    return behaviours, problems


def _entry(
    entry: Any, index: int, located: Located, file: str, problems: list[Problem]
) -> Behaviour | None:
    line = located.line_of((index,)) or 1
    if not isinstance(entry, Mapping):
        problems.append(Problem(file, line, f"[{index}]", "an entry must be a mapping"))
        return None
    name = entry.get("id")
    where = name if isinstance(name, str) else f"[{index}]"
    found = len(problems)
    for key in entry:
        if key not in FIELDS:
            problems.append(Problem(file, line, where, f"unknown field {key!r}"))
    for key in ("id", "group", "title", "question"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip() or "\n" in value.strip():
            problems.append(Problem(file, line, where, f"{key}: needs one line of text"))
    if isinstance(name, str) and not _ID.match(name):
        problems.append(Problem(file, line, where, "id: lower-case words joined by '-'"))
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("spec", "scenarios"):
        value = entry.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            problems.append(Problem(file, line, where, f"{key}: needs a non-empty list of names"))
            continue
        if len(set(value)) < len(value):
            problems.append(Problem(file, line, where, f"{key}: a name is listed twice"))
        lists[key] = tuple(value)
    if len(problems) > found:
        return None
    return Behaviour(
        id=str(name),
        group=str(entry["group"]).strip(),
        title=str(entry["title"]).strip(),
        question=str(entry["question"]).strip(),
        spec=lists["spec"],
        scenarios=lists["scenarios"],
        line=line,
    )


def check_behaviours(
    behaviours: Iterable[Behaviour],
    scenario_spec: Mapping[str, Sequence[str]],
    requirements: Iterable[str],
    file: str,
) -> list[Problem]:
    """What ties the behaviours to the suite wrongly: a scenario that does not exist or
    cites none of the behaviour's IDs, an ID that is not a requirement or that none of
    its scenarios cites. ``scenario_spec`` is scenario id -> the IDs it cites."""
    known = set(requirements)
    problems: list[Problem] = []
    for behaviour in behaviours:
        cited: set[str] = set()
        for scenario in behaviour.scenarios:
            spec = scenario_spec.get(scenario)
            if spec is None:
                message = f"scenario {scenario!r} does not exist"
                problems.append(Problem(file, behaviour.line, behaviour.id, message))
                continue
            shared = set(spec) & set(behaviour.spec)
            if not shared:
                message = (
                    f"scenario {scenario!r} cites none of {', '.join(behaviour.spec)} "
                    f"(it cites {', '.join(spec) or 'nothing'})"
                )
                problems.append(Problem(file, behaviour.line, behaviour.id, message))
            cited |= shared
        for spec_id in behaviour.spec:
            if spec_id not in known:
                message = f"{spec_id} is not a requirement of SPEC.md"
                problems.append(Problem(file, behaviour.line, behaviour.id, message))
            elif spec_id not in cited:
                message = f"{spec_id} is cited by none of the behaviour's scenarios"
                problems.append(Problem(file, behaviour.line, behaviour.id, message))
    return problems


def provenance_of(
    spec_ids: Iterable[str], provenances: Mapping[str, Provenance]
) -> dict[Provenance, tuple[str, ...]]:
    """The IDs grouped by their provenance (documented, measured, decided, in that
    order); an ID without an evidence entry is left out."""
    grouped: dict[Provenance, list[str]] = {p: [] for p in PROVENANCES}
    for spec_id in spec_ids:
        provenance = provenances.get(spec_id)
        if provenance is not None:
            grouped[provenance].append(spec_id)
    return {p: tuple(ids) for p, ids in grouped.items() if ids}
