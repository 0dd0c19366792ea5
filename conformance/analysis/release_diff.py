"""Release diffs: which scenarios changed outcome between two runs, ID by ID.

``toolconf diff A.jsonl B.jsonl`` compares two JSON-lines reports of
``toolconf run`` (say, two releases of one implementation, or one release
before and after a change). A scenario *changed* when its outcome or the
verdict of one assertion level (PROTO-LEVEL-1) differs between the two. The
Markdown page groups the changes by the SPEC.md section of each ID the
scenario cites, ID by ID: first what changed in behaviour, then what changed
in rendering or identity only. Scenarios in one run only are counted apart.

Behaviour of the newer run that SPEC.md has no ID for cannot come out of the
reports (nothing cites an ID that does not exist); an optional YAML file
lists it, each entry with its evidence, and the page shows it under its own
heading as "not specified". No ID is invented for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from conformance.analysis.fidelity import LEVELS, Report
from conformance.errors import ConformanceError
from conformance.suite.spec import Spec

__all__ = ["ReleaseChange", "Unspecified", "diff_markdown", "diff_reports", "load_unspecified"]

_BROKEN: Final = frozenset({"crash", "timeout", "error"})


@dataclass(frozen=True, slots=True)
class ReleaseChange:
    """One scenario whose outcome or level verdicts differ between runs A and B."""

    id: str
    spec: tuple[str, ...]
    before: Mapping[str, str]
    """``outcome`` and each level -> its verdict in run A."""
    after: Mapping[str, str]
    """The same in run B."""
    message: str = ""
    """B's first mismatch, when B does not pass."""

    @property
    def behaviour_changed(self) -> bool:
        """Whether what the implementation did changed (not only how it said it)."""
        return self.before["behaviour"] != self.after["behaviour"]

    def summary(self) -> str:
        """``behaviour pass → fail, rendering fail → pass``: the levels that moved."""
        keys = [
            k for k in ("behaviour", "identity", "rendering") if self.before[k] != self.after[k]
        ]
        if not keys:
            keys = ["outcome"]
        return ", ".join(f"{k} {self.before[k]} → {self.after[k]}" for k in keys)


@dataclass(frozen=True, slots=True)
class Unspecified:
    """Behaviour of run B that SPEC.md has no ID for, with the scenarios that show it."""

    title: str
    text: str
    evidence: tuple[str, ...] = ()


def _verdicts(result: Mapping[str, Any]) -> dict[str, str]:
    """``outcome`` and per level ``pass`` / ``fail`` / ``unobserved`` / ``n/a`` / broken."""
    outcome = str(result.get("raw_outcome") or result.get("outcome"))
    out = {"outcome": outcome}
    if outcome == "not_applicable":
        return out | dict.fromkeys(LEVELS, "n/a")
    if outcome in _BROKEN:
        return out | {"behaviour": outcome, "identity": "unobserved", "rendering": "unobserved"}
    levels = result.get("levels")
    for level in LEVELS:
        entry = levels.get(level) if isinstance(levels, Mapping) else None
        found = entry.get("verdict") if isinstance(entry, Mapping) else None
        out[level] = found if found in ("pass", "fail") else "unobserved"
    return out


def diff_reports(a: Report, b: Report) -> tuple[list[ReleaseChange], list[str], list[str]]:
    """The changed scenarios (in B's order), and the ids only in A and only in B."""
    before = {str(r.get("id")): r for r in a.results}
    after = {str(r.get("id")): r for r in b.results}
    changes = []
    for rid, result in after.items():
        if rid not in before:
            continue
        old, new = _verdicts(before[rid]), _verdicts(result)
        if old != new:
            spec = tuple(result.get("spec") or before[rid].get("spec") or ())
            message = "" if new["outcome"] == "pass" else str(result.get("message") or "")
            changes.append(ReleaseChange(rid, spec, old, new, message))
    only_a = sorted(set(before) - set(after))
    only_b = sorted(set(after) - set(before))
    return changes, only_a, only_b


def load_unspecified(path: Path) -> list[Unspecified]:
    """The ``not specified`` entries: a YAML list of ``{title, text, evidence: [ids]}``.

    Raises:
        ConformanceError: the file is not such a list.
    """
    data = yaml.safe_load(path.read_text("utf-8")) or []
    if not isinstance(data, list):
        raise ConformanceError(f"{path}: expected a list of {{title, text, evidence}}")
    out = []
    for entry in data:
        if not isinstance(entry, Mapping) or not {"title", "text"} <= set(entry):
            raise ConformanceError(f"{path}: each entry needs a title and a text: {entry!r}")
        evidence = tuple(str(e) for e in entry.get("evidence") or ())
        out.append(Unspecified(str(entry["title"]), str(entry["text"]).strip(), evidence))
    return out


def _name(report: Report) -> str:
    implementation = report.header.get("implementation") or {}
    return f"{implementation.get('name', '?')} {implementation.get('version', '?')}"


def _ticks(ids: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(f"`{i}`" for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def diff_markdown(
    a: Report,
    b: Report,
    spec: Spec,
    *,
    command: str,
    unspecified: Sequence[Unspecified] = (),
    edited: frozenset[str] = frozenset(),
    notes: Sequence[str] = (),
) -> str:
    """The release-diff page: counts, then per SPEC section and ID the scenarios that moved.

    ``edited`` are scenario ids whose file changed between the two runs' suites: their
    change may be the suite's rather than the implementation's, and each is marked so.
    ``notes`` are sentences for the reader, shown under the counts.
    """
    changes, only_a, only_b = diff_reports(a, b)
    requirements = spec.requirements
    sections = spec.section_labels()
    order = {rid: req.line for rid, req in requirements.items()}
    behaviour = [c for c in changes if c.behaviour_changed]
    other = [c for c in changes if not c.behaviour_changed]
    name_a, name_b = _name(a), _name(b)
    lines = [
        f"# What changed from {name_a} to {name_b}",
        "",
        f"- A: `{a.header.get('impl', '?')}` ({name_a}), run {a.header.get('started', '?')}, "
        f"profile {a.header.get('profile', 'documented')}",
        f"- B: `{b.header.get('impl', '?')}` ({name_b}), run {b.header.get('started', '?')}, "
        f"profile {b.header.get('profile', 'documented')}",
        f"- regenerate: `{command}`",
        f"- scenarios in both: {len(a.results) - len(only_a)}; changed: {len(changes)} "
        f"({len(behaviour)} in behaviour, {len(other)} in rendering or identity only); "
        f"only in A: {len(only_a)}; only in B: {len(only_b)}",
        "",
        "A scenario *changed* when its outcome or the verdict of one assertion level "
        "(SPEC.md PROTO-LEVEL-1) differs between the runs; `pass → fail` means B no longer "
        "does what SPEC.md says and A did. Each scenario is listed under every ID it cites.",
    ]
    if edited:
        marked = sum(c.id in edited for c in changes)
        lines += [
            "",
            f"{marked} of the changed scenarios were edited between the runs' suites (marked "
            "*edited*): their change may be the suite's, not the implementation's.",
        ]
    lines += [f"\n{note}" for note in notes]
    by_id: dict[str, list[ReleaseChange]] = {}
    for change in changes:
        for rid in change.spec:
            by_id.setdefault(rid, []).append(change)
    moved = sorted(by_id, key=lambda rid: (order.get(rid, 10**9), rid))
    section = None
    for rid in moved:
        heading = sections.get(rid, "not in SPEC.md")
        if heading != section:
            section = heading
            lines += ["", f"## {section}", ""]
        entries = by_id[rid]
        did = [c for c in entries if c.behaviour_changed]
        said = [c for c in entries if not c.behaviour_changed]
        level = requirements[rid].level if rid in requirements else "?"
        lines.append(
            f"- **{rid}** ({level}): {len(did)} in behaviour, {len(said)} in rendering or "
            "identity only"
        )
        for change in did:
            note = f" — {change.message[:160]}" if change.message else ""
            mark = " *edited*" if change.id in edited else ""
            lines.append(f"  - `{change.id}`{mark}: {change.summary()}{note}")
        if said:
            names = [f"{c.id}{' (edited)' if c.id in edited else ''}" for c in said]
            lines.append(f"  - rendering or identity only: {_ticks(names)}")
    lines += ["", "## Not specified", ""]
    if unspecified:
        lines.append(
            f"Behaviour {name_b} has that SPEC.md has no ID for (outside the source documents' "
            "scope): not specified, so no scenario checks it and no ID is given to it."
        )
        lines.append("")
        for entry in unspecified:
            seen = f" Seen in: {_ticks(list(entry.evidence), 4)}." if entry.evidence else ""
            lines.append(f"- **{entry.title}**: {entry.text}{seen}")
    else:
        lines.append("None listed.")
    if only_a or only_b:
        lines += ["", "## Scenarios in one run only", ""]
        if only_a:
            lines.append(f"- only in A ({len(only_a)}): {_ticks(only_a, 40)}")
        if only_b:
            lines.append(f"- only in B ({len(only_b)}): {_ticks(only_b, 40)}")
    return "\n".join(lines) + "\n"
