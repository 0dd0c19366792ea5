"""Run reports in four formats: JUnit XML, JSON lines, Markdown and HTML.

Every format carries the same facts: the implementation and its features, the
fields it cannot report and those it infers (PROTO-UNREPORTED-1,
PROTO-INFER-1), one record per scenario (outcome, SPEC IDs, the verdict and
counts of each assertion level, every mismatch with its level and step,
stderr), the counts, and the level figures ("behaviour 100% (n/m), ...") for
all scenarios and for MUST, SHOULD and MAY apart. JSON lines is the machine
format: a ``header`` line, one ``result`` line per scenario, a ``footer`` line.

JUnit XML drops what XML 1.0 cannot carry (an adapter's stderr may hold ANSI
colour codes or NUL bytes). Markdown is written to be appended to
``$GITHUB_STEP_SUMMARY``: the verdict first, tables by level, area, feature and
SPEC section, then each scenario not passing in a collapsed ``<details>``.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from conformance.analysis.console import (
    describe_result,
    format_levels,
    format_table,
    level_figures,
    provenance_figures,
    provenance_line,
    summarize,
)
from conformance.analysis.run_page import write_run_page
from conformance.run.results import Outcome, ScenarioResult, count_outcomes
from conformance.suite.checks import LEVELS
from conformance.suite.provenance import PROVENANCES
from conformance.wire.protocol import PROTOCOL_VERSION
from reference.version import __version__

__all__ = ["FORMATS", "RunInfo", "write_report", "xml_safe"]

# ESC-introduced sequences (CSI such as colours, OSC such as titles, and the
# two-byte ones), then every code point XML 1.0 does not allow.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_DETAILS_LIMIT = 200
"""Not-passing scenarios the Markdown report details; the rest are listed by id
(GitHub caps a step summary at 1 MiB)."""


def xml_safe(text: str) -> str:
    """``text`` without ANSI escape sequences and without characters XML 1.0 forbids."""
    return _XML_ILLEGAL.sub("", _ANSI.sub("", text))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    """What a report says about the run as a whole."""

    impl: str
    implementation: Mapping[str, Any] = field(default_factory=dict)
    features: Sequence[str] = ()
    started: str = ""
    unreported: Sequence[str] = ()
    inferences: Sequence[Mapping[str, Any]] = ()
    levels: Sequence[str] = LEVELS
    """The assertion levels that decided pass or fail."""
    sections: Mapping[str, str] = field(default_factory=dict)
    """SPEC ID -> its SPEC.md section label (``Spec.section_labels``), for grouping."""
    profile: str = "documented"
    """PROFILE-RUN-1: the behaviour profile the run judged."""
    plays: Sequence[str] = ("documented",)
    """PROTO-HELLO-2: the profiles the implementation said it plays."""
    provenances: Mapping[str, str] = field(default_factory=dict)
    """SPEC ID -> where its rule comes from (``Spec.provenances``): the behaviour figures
    per provenance (PROTO-PROVENANCE-1); empty, none are given."""
    selected: Sequence[str] = PROVENANCES
    """The provenances the run judged (``run --provenance``; all three by default)."""
    shard: Mapping[str, Any] | None = None
    """A part of a run (``run --shard``): ``index`` and ``count`` (K of N) and ``order``,
    the whole run's ids in its order; JSON lines carries it, for ``toolconf merge``."""

    def judgement(self) -> list[str]:
        """What the verdicts rest on: profile, deciding levels, provenances, unreported,
        inferences."""
        lines = [f"Deciding levels: {', '.join(self.levels)}."]
        if self.profile != "documented" or tuple(self.plays) != ("documented",):
            played = "plays it" if self.profile in self.plays else "does not claim to play it"
            lines.insert(0, f"Profile: {self.profile} (the implementation {played}).")
        if tuple(self.selected) != PROVENANCES:
            chosen = " or ".join(self.selected)
            lines.append(
                f"Judged: scenarios whose SPEC IDs are each {chosen} (PROTO-PROVENANCE-1)."
            )
        if self.unreported:
            lines.append(f"Not reported by the implementation: {', '.join(self.unreported)}.")
        for i in self.inferences:
            lines.append(
                f"Inferred: {i.get('field')} from {i.get('from')} through {i.get('table')}."
            )
        return lines


def _counts(results: Sequence[ScenarioResult]) -> dict[str, int]:
    return {str(k): v for k, v in count_outcomes(results).items()}


def _figures(results: Sequence[ScenarioResult]) -> dict[str, Any]:
    """Level figures of all scenarios (``all``) and of each requirement level apart."""
    groups: dict[str, list[ScenarioResult]] = {"all": list(results)}
    for result in results:
        groups.setdefault(result.level or "-", []).append(result)
    return {
        name: {
            level: {"held": f.held, "observed": f.observed, "unobserved": f.unobserved}
            for level, f in level_figures(members).items()
        }
        | {"failing": sum(r.base_outcome is Outcome.FAIL for r in members)}
        for name, members in groups.items()
    }


def _jsonl(results: Sequence[ScenarioResult], info: RunInfo, out: TextIO) -> None:
    header = {
        "type": "header",
        "toolconf": __version__,
        "protocol": PROTOCOL_VERSION,
        "impl": info.impl,
        "implementation": dict(info.implementation),
        "features": sorted(info.features),
        "started": info.started,
        "levels": list(info.levels),
        "unreported": list(info.unreported),
        "inferences": [dict(i) for i in info.inferences],
        "profile": info.profile,  # PROFILE-RUN-1
        "plays": list(info.plays),  # PROTO-HELLO-2
        "provenance": list(info.selected),  # PROTO-PROVENANCE-1
    }
    if info.shard is not None:
        header["shard"] = dict(info.shard)
    out.write(json.dumps(header, ensure_ascii=False) + "\n")
    for result in results:
        out.write(json.dumps({"type": "result", **result.to_json()}, ensure_ascii=False) + "\n")
    footer: dict[str, Any] = {
        "type": "footer",
        "counts": _counts(results),
        "levels": _figures(results),
    }
    if info.provenances:
        footer["provenance"] = {
            name: {"held": f.held, "observed": f.observed, "unobserved": f.unobserved}
            for name, f in provenance_figures(results, info.provenances).items()
        }
    out.write(json.dumps(footer) + "\n")


_JUNIT_FAILURE = {Outcome.FAIL: "failure", Outcome.XPASS: "failure"}
_JUNIT_ERROR = {Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT}
_JUNIT_SKIP = {Outcome.NOT_APPLICABLE, Outcome.XFAIL}


def _junit(results: Sequence[ScenarioResult], info: RunInfo, out: TextIO) -> None:
    suites = ET.Element("testsuites", name=f"toolconf {info.impl}")
    by_area: dict[str, list[ScenarioResult]] = {}
    for result in results:
        by_area.setdefault(result.area or "-", []).append(result)
    for area, members in sorted(by_area.items()):
        counts = count_outcomes(members)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=area,
            tests=str(len(members)),
            failures=str(counts[Outcome.FAIL] + counts[Outcome.XPASS]),
            errors=str(sum(counts[o] for o in _JUNIT_ERROR)),
            skipped=str(sum(counts[o] for o in _JUNIT_SKIP)),
            time=f"{sum(r.duration for r in members):.3f}",
        )
        suite_properties = ET.SubElement(suite, "properties")
        ET.SubElement(suite_properties, "property", name="levels", value=format_levels(members))
        for line in info.judgement():
            ET.SubElement(suite_properties, "property", name="judgement", value=line)
        for result in members:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"toolconf.{area}",
                name=result.id,
                time=f"{result.duration:.3f}",
            )
            if result.path:
                case.set("file", result.path)
            properties = ET.SubElement(case, "properties")
            ET.SubElement(properties, "property", name="spec", value=", ".join(result.spec))
            ET.SubElement(properties, "property", name="level", value=result.level)
            ET.SubElement(properties, "property", name="outcome", value=str(result.outcome))
            for level in LEVELS:
                ET.SubElement(properties, "property", name=level, value=str(result.verdict(level)))
            summary = result.message or result.reason or str(result.outcome)
            if result.outcome in _JUNIT_FAILURE:
                ET.SubElement(
                    case, "failure", message=summary[:500], type=str(result.outcome)
                ).text = describe_result(result)
            elif result.outcome in _JUNIT_ERROR:
                ET.SubElement(
                    case, "error", message=summary[:500], type=str(result.outcome)
                ).text = describe_result(result)
            elif result.outcome in _JUNIT_SKIP:
                ET.SubElement(case, "skipped", message=f"{result.outcome}: {result.reason}"[:500])
            if result.stderr:
                ET.SubElement(case, "system-err").text = result.stderr
    ET.indent(suites)
    out.write(xml_safe(ET.tostring(suites, encoding="unicode", xml_declaration=True)) + "\n")


def _markdown(results: Sequence[ScenarioResult], info: RunInfo, out: TextIO) -> None:
    name = info.implementation.get("name", info.impl)
    version = info.implementation.get("version", "")
    bad = [r for r in results if r.bad]
    out.write(f"# Conformance: {name} {version}".rstrip() + "\n\n")
    verdict = "FAILED" if bad else "OK"
    out.write(
        f"**{verdict}**: {len(results) - len(bad)} of {len(results)} scenarios passing "
        f"or accounted for; {len(bad)} not passing. {format_levels(results)}.\n\n"
    )
    if info.provenances:
        out.write(provenance_line(results, info.provenances).capitalize() + ".\n\n")
    out.write(f"Implementation `{info.impl}`, toolconf {__version__}, protocol {PROTOCOL_VERSION}")
    out.write(f", started {info.started}.\n\n" if info.started else ".\n\n")
    out.write(f"Features: {', '.join(sorted(info.features)) or 'none'}.\n\n")
    out.write(" ".join(info.judgement()) + "\n\n")
    out.write("## Levels\n\n" + _level_table(results) + "\n\n")
    out.write(format_table("level", summarize(results, lambda r: r.level), markdown=True) + "\n\n")
    out.write("## By area\n\n")
    out.write(format_table("area", summarize(results, lambda r: r.area), markdown=True) + "\n\n")
    out.write("## By feature\n\nA scenario counts under each feature it requires.\n\n")
    by_feature = _summarize_many(results, lambda r: r.requires or ("(none)",))
    out.write(format_table("feature", by_feature, markdown=True) + "\n\n")
    if info.sections:
        out.write(
            "## By SPEC section\n\nA scenario counts under the section of each ID it cites.\n\n"
        )
        by_section = _summarize_many(
            results,
            lambda r: [info.sections.get(spec_id, "(unknown)") for spec_id in r.spec],
            order=_section_key,
        )
        out.write(format_table("section", by_section, markdown=True) + "\n\n")
    differing = [r for r in results if r.outcome is Outcome.PASS and r.mismatches]
    if differing:
        out.write("## Passing, with differences in levels that did not decide\n\n")
        _details(differing, out)
    shown = bad + [r for r in results if r.outcome is Outcome.XFAIL]
    if shown:
        out.write("## Not passing\n\n")
        _details(shown, out)


def _details(results: Sequence[ScenarioResult], out: TextIO) -> None:
    """Each result as a collapsed block, up to ``_DETAILS_LIMIT``; the rest by id."""
    for result in results[:_DETAILS_LIMIT]:
        title = html.escape(f"{result.outcome} {result.area}/{result.id}: {result.title}")
        text = html.escape(describe_result(result))
        out.write(f"<details><summary>{title}</summary>\n\n<pre>{text}</pre>\n</details>\n\n")
    rest = results[_DETAILS_LIMIT:]
    if rest:
        out.write(f"And {len(rest)} more: " + ", ".join(f"`{r.id}`" for r in rest) + "\n\n")


def _summarize_many(
    results: Sequence[ScenarioResult],
    keys: Callable[[ScenarioResult], Sequence[str]],
    order: Callable[[str], Any] = str,
) -> list[tuple[str, dict[Outcome, int]]]:
    """As ``console.summarize``, but a result counts once under each of its (distinct) keys;
    groups sorted by ``order`` of their names."""
    groups: dict[str, list[ScenarioResult]] = {}
    for result in results:
        for key in dict.fromkeys(keys(result)):
            groups.setdefault(key, []).append(result)
    rows = [(name, count_outcomes(groups[name])) for name in sorted(groups, key=order)]
    rows.append(("total", count_outcomes(results)))
    return rows


def _section_key(name: str) -> tuple[int, ...]:
    """``12.4 Dedup ...`` sorts as (12, 4); anything unnumbered last."""
    number = name.split(" ", 1)[0]
    parts = [int(p) for p in number.split(".") if p.isdigit()]
    return tuple(parts) if parts else (10**6,)


def _level_table(results: Sequence[ScenarioResult]) -> str:
    """Markdown: one row for all scenarios and one per requirement level, a column per level."""
    groups: dict[str, list[ScenarioResult]] = {"all": list(results)}
    for result in results:
        groups.setdefault(result.level or "-", []).append(result)
    rows = [
        "| scenarios | " + " | ".join(LEVELS) + " | failing |",
        "|---" * (len(LEVELS) + 2) + "|",
    ]
    for name, members in groups.items():
        figures = level_figures(members)
        failing = sum(r.base_outcome is Outcome.FAIL for r in members)
        cells = " | ".join(str(figures[level]) for level in LEVELS)
        rows.append(f"| {name} | {cells} | {failing} |")
    return "\n".join(rows)


FORMATS: Mapping[str, Callable[[Sequence[ScenarioResult], RunInfo, TextIO], None]] = {
    "junit": _junit,
    "jsonl": _jsonl,
    "markdown": _markdown,
    "html": write_run_page,
}
"""Report format name -> writer."""


def write_report(fmt: str, results: Sequence[ScenarioResult], info: RunInfo, out: TextIO) -> None:
    """Write a report of ``fmt`` (a key of ``FORMATS``) to ``out``."""
    FORMATS[fmt](results, info, out)
