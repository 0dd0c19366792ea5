"""One run's report put back together from the JSON-lines reports of its parts.

The parts are the shards of ``toolconf run --shard K/N`` (``toolconf
merge``), or the workers of ``pytest --toolconf -n N``. Each part's header
carries ``shard.order``, the ids of every scenario the whole run chose in
the run's order; a shard's also carries its ``index`` and ``count``, from
which its share follows (``conformance.suite.shard``). The merged report is
the whole run's: the header of the parts (``started`` the earliest, the
features their union, no ``shard``), the results in the run's order, and
the counts and figures recomputed from them by whoever writes it.

Parts that cannot be one run are refused with a ``MergeError`` that names
the reports and what differs: another implementation, version, profile or
judgement (``SAME``), another selection, a shard given twice or a result
outside its shard's share, a scenario in two reports, or (``every_shard``)
a shard missing. A shard that stopped early (``--maxfail``) is no error:
``Merged.notes`` says how many scenarios no report holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from conformance.analysis.reports import RunInfo
from conformance.errors import ConformanceError
from conformance.run.results import ScenarioResult
from conformance.suite.checks import LEVELS
from conformance.suite.provenance import PROVENANCES
from conformance.suite.shard import Shard
from conformance.wire.profiles import DEFAULT_PROFILE

__all__ = ["SAME", "MergeError", "Merged", "Part", "merge_parts", "read_part", "run_info"]

SAME: Final[Mapping[str, str]] = {
    "toolconf": "toolconf version",
    "protocol": "protocol version",
    "impl": "implementation (--impl)",
    "implementation": "implementation (name and version its hello gave)",
    "profile": "profile judged (--profile)",
    "plays": "profiles the implementation plays",
    "levels": "deciding levels (--levels)",
    "unreported": "fields the implementation does not report",
    "inferences": "inferences",
    "provenance": "provenances judged (--provenance)",
}
"""Header field -> what it is, in words: every part must agree on each, or they are not
parts of one run."""


class MergeError(ConformanceError):
    """The reports cannot be merged into one run's; the message says why."""


@dataclass(frozen=True, slots=True)
class Part:
    """One part's JSON-lines report: its name (the file, for messages), header and results."""

    name: str
    header: Mapping[str, Any]
    results: Sequence[Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Merged:
    """The whole run: its header, its results in the run's order, and what a reader should
    know (scenarios no part holds)."""

    header: dict[str, Any]
    results: list[ScenarioResult]
    notes: list[str] = field(default_factory=list)


def read_part(path: Path) -> Part:
    """A saved JSON-lines report (``toolconf run --report jsonl``).

    Raises:
        MergeError: no such file, or not a JSON-lines report with a header.
    """
    if not path.is_file():
        raise MergeError(f"no such report: {path}")
    try:
        return parse_part(str(path), path.read_text("utf-8"))
    except UnicodeDecodeError as exc:
        raise MergeError(f"{path}: not a JSON-lines report: {exc}") from exc


def parse_part(name: str, text: str) -> Part:
    """A JSON-lines report's text as a part called ``name``.

    Raises:
        MergeError: a line that is not JSON, or no header.
    """
    header: Mapping[str, Any] | None = None
    results: list[Mapping[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MergeError(f"{name}, line {number}: not JSON: {exc}") from exc
        if not isinstance(record, dict):
            raise MergeError(f"{name}, line {number}: not a JSON object")
        if record.get("type") == "header":
            header = record
        elif record.get("type") == "result":
            if not isinstance(record.get("id"), str):
                raise MergeError(f"{name}, line {number}: a result without an id")
            results.append(record)
    if header is None:
        raise MergeError(f"{name}: no header line: not a toolconf JSON-lines report")
    return Part(name, header, results)


def merge_parts(parts: Sequence[Part], *, every_shard: bool = True) -> Merged:
    """The whole run of which ``parts`` are the parts.

    ``every_shard``: a shard of the run whose share is not empty must be among
    ``parts`` (``toolconf merge``); pytest-xdist's workers, which take
    scenarios as they come, are merged without it.

    Raises:
        MergeError: the parts are not parts of one run (see the module's docstring).
    """
    if not parts:
        raise MergeError("no reports to merge")
    _check_same(parts)
    order = _order(parts)
    notes: list[str] = []
    if order is None:
        records = _concatenated(parts)
    else:
        shards = _shards(parts, order, every_shard=every_shard)
        records = _in_order(parts, order)
        notes += _unjudged(order, records, shards)
    first = parts[0].header
    header = {key: value for key, value in first.items() if key != "shard"}
    features = {str(f) for part in parts for f in part.header.get("features", ())}
    header["features"] = sorted(features)
    started = sorted(str(p.header["started"]) for p in parts if p.header.get("started"))
    header["started"] = started[0] if started else first.get("started", "")
    return Merged(header, [ScenarioResult.from_json(r) for r in records], notes)


def run_info(
    header: Mapping[str, Any],
    *,
    provenances: Mapping[str, str],
    sections: Mapping[str, str],
) -> RunInfo:
    """What a report of the merged run says of it, from its header.

    ``provenances`` (SPEC ID -> provenance) and ``sections`` (SPEC ID -> section label)
    are the SPEC's, as a run's reports take them.
    """
    return RunInfo(
        impl=str(header.get("impl", "")),
        implementation=dict(header.get("implementation", {})),
        features=list(header.get("features", ())),
        started=str(header.get("started", "")),
        unreported=list(header.get("unreported", ())),
        inferences=[dict(i) for i in header.get("inferences", ())],
        levels=tuple(header.get("levels", LEVELS)),
        sections=sections,
        profile=str(header.get("profile", DEFAULT_PROFILE)),
        plays=tuple(header.get("plays", (DEFAULT_PROFILE,))),
        provenances=provenances,
        selected=tuple(header.get("provenance", PROVENANCES)),
    )


def _check_same(parts: Sequence[Part]) -> None:
    first = parts[0]
    for key, words in SAME.items():
        for other in parts[1:]:
            if other.header.get(key) != first.header.get(key):
                raise MergeError(
                    f"{first.name} and {other.name} are not parts of one run: they differ in "
                    f"the {words}, {_show(first.header.get(key))} against "
                    f"{_show(other.header.get(key))}"
                )


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:119] + "…"


def _order(parts: Sequence[Part]) -> list[str] | None:
    """The whole run's ids in its order, when the parts say it (and all say the same)."""
    orders = [p.header.get("shard", {}).get("order") for p in parts]
    if all(o is None for o in orders):
        return None
    for part, order in zip(parts, orders, strict=True):
        if not isinstance(order, list):
            raise MergeError(
                f"{part.name} is a whole run (or from a toolconf without shards) and other "
                "reports are parts of one: merge the parts of one run only"
            )
    if any(o != orders[0] for o in orders):
        differing = next(p for p, o in zip(parts, orders, strict=True) if o != orders[0])
        raise MergeError(
            f"{parts[0].name} and {differing.name} are parts of runs that chose different "
            "scenarios: run every shard with the same paths and selection options"
        )
    return [str(i) for i in orders[0]]


def _shards(parts: Sequence[Part], order: list[str], *, every_shard: bool) -> dict[int, Shard]:
    """Each part's ``--shard``, checked: one count, each index once, results in the share."""
    shards: dict[int, Shard] = {}
    named: dict[int, str] = {}
    for part in parts:
        record = part.header.get("shard", {})
        if "index" not in record:
            continue
        try:
            shard = Shard(int(record["index"]), int(record["count"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise MergeError(f"{part.name}: its shard is not K/N: {record!r:.200}") from exc
        if shards and shard.count != next(iter(shards.values())).count:
            raise MergeError(
                f"{part.name} is shard {shard}, {named[next(iter(shards))]} one of "
                f"{next(iter(shards.values())).count}: merge the shards of one run only"
            )
        if shard.index in shards:
            raise MergeError(
                f"{named[shard.index]} and {part.name} are both shard {shard}: the shards overlap"
            )
        share = set(shard.share(order))
        outside = [str(r["id"]) for r in part.results if r["id"] not in share]
        if outside:
            raise MergeError(
                f"{part.name} holds {', '.join(outside[:5])}, outside shard {shard}'s share: "
                "not a shard of this run"
            )
        shards[shard.index] = shard
        named[shard.index] = part.name
    if shards and every_shard:
        count = next(iter(shards.values())).count
        absent = (Shard(k, count) for k in range(1, count + 1) if k not in shards)
        missing = [s for s in absent if s.share(order)]
        if missing:
            shown = ", ".join(f"{s} ({len(s.share(order))} scenarios)" for s in missing)
            raise MergeError(f"missing shard{'s' if len(missing) > 1 else ''}: {shown}")
    return shards


def _is_load_error(record: Mapping[str, Any]) -> bool:
    return record.get("where") == "load" and record.get("kind") == "scenario"


def _in_order(parts: Sequence[Part], order: list[str]) -> list[Mapping[str, Any]]:
    """Every part's results at their places in ``order``; a scenario twice is an overlap."""
    places: dict[str, list[int]] = {}
    for position, scenario_id in enumerate(order):
        places.setdefault(scenario_id, []).append(position)
    found: dict[str, list[tuple[Mapping[str, Any], str]]] = {}
    for part in parts:
        for record in part.results:
            found.setdefault(str(record["id"]), []).append((record, part.name))
    placed: dict[int, Mapping[str, Any]] = {}
    for scenario_id, records in found.items():
        free = places.get(scenario_id, [])
        if not free:
            raise MergeError(
                f"{records[0][1]} holds {scenario_id}, which the run did not choose: not a part "
                "of this run"
            )
        if len(records) > len(free):
            holders = " and ".join(dict.fromkeys(name for _, name in records))
            raise MergeError(f"{scenario_id} is in {holders}: the reports overlap")
        records.sort(key=lambda item: not _is_load_error(item[0]))  # a run's load errors first
        for position, (record, _) in zip(free, records, strict=False):
            placed[position] = record
    return [placed[p] for p in sorted(placed)]


def _concatenated(parts: Sequence[Part]) -> list[Mapping[str, Any]]:
    """Reports that do not say the run's order, one after another; a scenario twice is an
    overlap."""
    holder: dict[tuple[str, str], str] = {}
    records: list[Mapping[str, Any]] = []
    for part in parts:
        for record in part.results:
            key = (str(record["id"]), str(record.get("path")))
            if key in holder:
                raise MergeError(
                    f"{key[0]} is in {holder[key]} and {part.name}: the reports overlap"
                )
            holder[key] = part.name
            records.append(record)
    return records


def _unjudged(
    order: list[str], records: Sequence[Mapping[str, Any]], shards: Mapping[int, Shard]
) -> list[str]:
    """A note when some chosen scenarios are in no report (a part stopped early)."""
    left = len(order) - len(records)
    if left <= 0:
        return []
    held = {str(r["id"]) for r in records}
    short = [
        str(shard)
        for _, shard in sorted(shards.items())
        if any(i not in held for i in shard.share(order))
    ]
    where = f" (shard {', '.join(short)} stopped early)" if short else " (a part stopped early)"
    return [f"{left} of the {len(order)} scenarios chosen are in no report{where}"]
