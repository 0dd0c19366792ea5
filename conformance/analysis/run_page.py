"""The HTML run report (``toolconf run --report html=PATH``), laid out for reading.

Top to bottom: the verdict (the line the console closes with), what the
verdict rests on (implementation, profile, deciding levels), the per-level
figures (all scenarios, then MUST, SHOULD and MAY apart), the outcome counts,
then every scenario in groups, those that need a look first:

1. not passing (failures, crashes, timeouts, errors, unexpected passes),
   grouped by area and, inside an area, by the SPEC section of the first ID
   each cites; every group and every scenario folded, counts in the summary;
2. passing with differences at levels that did not decide;
3. expected failures;
4. not applicable, by area;
5. passing, by area.

A filter box narrows every group to the scenarios whose id, title, SPEC IDs,
outcome or details hold the text, and opens the groups that still have one
(``assets/run.js``). Long tokens (paths, ids, messages) wrap instead of
widening the page. The page is one file, style and script inline.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from typing import Final, Protocol, TextIO

from conformance.analysis.console import (
    COLUMNS,
    describe_result,
    level_figures,
    provenance_line,
)
from conformance.analysis.verdict import verdict_line
from conformance.run.results import Outcome, ScenarioResult, count_outcomes
from conformance.suite.checks import LEVELS
from conformance.wire.protocol import PROTOCOL_VERSION
from reference.version import __version__

__all__ = ["RunFacts", "write_run_page"]

_REQUIREMENT_ORDER: Final = {"MUST": 0, "SHOULD": 1, "MAY": 2}


class RunFacts(Protocol):
    """What the page needs to know about the run (``reports.RunInfo`` has it)."""

    @property
    def impl(self) -> str: ...
    @property
    def implementation(self) -> Mapping[str, object]: ...
    @property
    def features(self) -> Sequence[str]: ...
    @property
    def started(self) -> str: ...
    @property
    def sections(self) -> Mapping[str, str]: ...
    @property
    def provenances(self) -> Mapping[str, str]: ...

    def judgement(self) -> list[str]: ...


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _asset(name: str) -> str:
    return resources.files("conformance.analysis").joinpath("assets", name).read_text("utf-8")


def _figures_table(results: Sequence[ScenarioResult]) -> str:
    """Rows: all scenarios, then each requirement level; columns: each assertion level's
    held / observed with a bar, then the scenarios failing."""
    groups: dict[str, list[ScenarioResult]] = {"all": list(results)}
    for result in sorted(results, key=lambda r: (_REQUIREMENT_ORDER.get(r.level, 9), r.level)):
        groups.setdefault(result.level or "-", []).append(result)
    head = "".join(f"<th>{_esc(level)}</th>" for level in LEVELS)
    rows = []
    for name, members in groups.items():
        figures = level_figures(members)
        cells = []
        for level in LEVELS:
            figure = figures[level]
            if not figure.observed:
                cells.append('<td class="none">not observed</td>')
                continue
            share = figure.held / figure.observed
            cells.append(
                f'<td><span class="pct">{figure.held * 100 // figure.observed}%</span> '
                f'<span class="frac">{figure.held}/{figure.observed}</span>'
                f'<span class="meter"><span style="width:{100 * share:.1f}%"></span></span></td>'
            )
        failing = sum(r.base_outcome is Outcome.FAIL for r in members)
        rows.append(
            f"<tr><th>{_esc(name)}</th>{''.join(cells)}"
            f'<td class="{"bad" if failing else ""}">{failing}</td></tr>'
        )
    return (
        '<table class="figures"><thead><tr><th>scenarios</th>'
        f"{head}<th>failing</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _counts(results: Sequence[ScenarioResult]) -> str:
    counts = count_outcomes(results)
    chips = "".join(
        f'<span class="chip o-{_esc(outcome)}">{counts[outcome]} {_esc(label)}</span>'
        for outcome, label in COLUMNS
        if counts[outcome]
    )
    return f'<p class="chips">{chips}<span class="chip">{len(results)} total</span></p>'


def _section(result: ScenarioResult, sections: Mapping[str, str]) -> str:
    for spec_id in result.spec:
        if spec_id in sections:
            return sections[spec_id]
    return "(no SPEC section)"


def _section_key(name: str) -> tuple[int, ...]:
    parts = [int(p) for p in name.split(" ", 1)[0].split(".") if p.isdigit()]
    return tuple(parts) if parts else (10**6,)


def _scenario(result: ScenarioResult, *, details: bool) -> str:
    """One scenario, folded: its outcome, id and title; its details when it has any."""
    text = " ".join([result.id, result.title, str(result.outcome), *result.spec])
    body = describe_result(result) if details else ""
    spec = ", ".join(result.spec)
    summary = (
        f'<span class="o o-{_esc(result.outcome)}">{_esc(result.outcome)}</span> '
        f'<code class="sid">{_esc(result.id)}</code> <span class="title">{_esc(result.title)}'
        f'</span> <span class="spec">{_esc(spec)}</span>'
    )
    if not body:
        return f'<div class="scenario plain" data-text="{_esc(text.lower())}">{summary}</div>'
    return (
        f'<details class="scenario" data-text="{_esc((text + " " + body).lower())}">'
        f"<summary>{summary}</summary><pre>{_esc(body)}</pre></details>"
    )


def _group(title: str, inner: str, count: int, css: str, note: str = "") -> str:
    shown = f' <span class="gnote">{_esc(note)}</span>' if note else ""
    return (
        f'<details class="group {css}"><summary><span class="gtitle">{_esc(title)}</span> '
        f'<span class="gcount">{count}</span>{shown}</summary><div class="gbody">{inner}</div>'
        "</details>"
    )


def _by_area(
    results: Sequence[ScenarioResult],
    css: str,
    inner: Callable[[list[ScenarioResult]], str],
    note: Callable[[list[ScenarioResult]], str] | None = None,
) -> str:
    areas: dict[str, list[ScenarioResult]] = {}
    for result in results:
        areas.setdefault(result.area or "-", []).append(result)
    return "".join(
        _group(area, inner(members), len(members), css, note(members) if note else "")
        for area, members in sorted(areas.items())
    )


def _sections_note(members: list[ScenarioResult], sections: Mapping[str, str]) -> str:
    """``9 The read-file state 2 · 14 Edit 2``: the sections a folded area holds."""
    counts: dict[str, int] = {}
    for result in members:
        name = _section(result, sections)
        counts[name] = counts.get(name, 0) + 1
    return " · ".join(f"{name} {counts[name]}" for name in sorted(counts, key=_section_key))


def _failing_area(members: list[ScenarioResult], sections: Mapping[str, str]) -> str:
    by_section: dict[str, list[ScenarioResult]] = {}
    for result in members:
        by_section.setdefault(_section(result, sections), []).append(result)
    parts = []
    for name in sorted(by_section, key=_section_key):
        listed = _plain_list(by_section[name], details=True)
        parts.append(
            f'<div class="section"><h4>{_esc(name)} <span class="gcount">'
            f"{len(by_section[name])}</span></h4>{listed}</div>"
        )
    return "".join(parts)


def _plain_list(members: list[ScenarioResult], *, details: bool = False) -> str:
    return "".join(_scenario(r, details=details) for r in sorted(members, key=lambda r: r.id))


def _detailed(members: list[ScenarioResult]) -> str:
    return _plain_list(members, details=True)


def _provenance(results: Sequence[ScenarioResult], info: RunFacts) -> str:
    """The behaviour figures by where each rule comes from (PROTO-PROVENANCE-1)."""
    if not info.provenances:
        return ""
    return f'<p class="meta">{_esc(provenance_line(results, info.provenances))}.</p>\n'


def write_run_page(results: Sequence[ScenarioResult], info: RunFacts, out: TextIO) -> None:
    """Write the page for ``results`` to ``out``."""
    version = info.implementation.get("version", "")
    name = f"{info.implementation.get('name', info.impl)} {version}".strip()
    verdict = verdict_line(results)
    bad = [r for r in results if r.bad]
    differing = [r for r in results if r.outcome is Outcome.PASS and r.mismatches]
    xfail = [r for r in results if r.outcome is Outcome.XFAIL]
    not_applicable = [r for r in results if r.outcome is Outcome.NOT_APPLICABLE]
    passed = [r for r in results if r.outcome is Outcome.PASS and not r.mismatches]
    sections = info.sections
    groups = [
        (
            "Not passing",
            bad,
            _by_area(
                bad,
                "bad",
                lambda m: _failing_area(m, sections),
                lambda m: _sections_note(m, sections),
            ),
            "Grouped by area, then by the SPEC section of each scenario's first ID.",
        ),
        (
            "Passing, with differences at levels that did not decide",
            differing,
            _by_area(differing, "differs", _detailed),
            "",
        ),
        ("Expected failures (xfail)", xfail, _by_area(xfail, "xfail", _detailed), ""),
        ("Not applicable", not_applicable, _by_area(not_applicable, "na", _detailed), ""),
        ("Passing", passed, _by_area(passed, "pass", _plain_list), ""),
    ]
    blocks = []
    for title, members, inner, note in groups:
        if not members:
            continue
        hint = f'<p class="hint">{_esc(note)}</p>' if note else ""
        blocks.append(
            f'<section class="outcome-group"><h2>{_esc(title)} <span class="gcount">'
            f"{len(members)}</span></h2>{hint}{inner}</section>"
        )
    started = f", started {_esc(info.started)}" if info.started else ""
    out.write(
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width'>"
        f"<title>Conformance: {_esc(name)}</title><style>{_asset('run.css')}</style></head>\n"
        "<body>\n"
        f"<h1>Conformance: {_esc(name)}</h1>\n"
        f'<p class="verdict {"failed" if bad else "ok"}" id="verdict">{_esc(verdict)}</p>\n'
        f'<p class="meta">Implementation <code>{_esc(info.impl)}</code>, toolconf '
        f"{_esc(__version__)}, protocol {PROTOCOL_VERSION}{started}. "
        f"{_esc(' '.join(info.judgement()))}</p>\n"
        f'<p class="meta">Features: {_esc(", ".join(sorted(info.features)) or "none")}.</p>\n'
        "<h2>Levels</h2>\n"
        '<p class="hint">Of the scenarios that ran to a verdict, how many held every observed '
        "assertion of each level.</p>\n"
        f"{_figures_table(results)}\n{_provenance(results, info)}{_counts(results)}\n"
        '<div class="filter"><label for="filter">Filter</label> '
        '<input id="filter" type="search" placeholder="id, title, SPEC ID, outcome or text '
        'of the details" autocomplete="off"> <span id="shown" class="hint"></span></div>\n'
        f"{''.join(blocks)}\n"
        f"<script>{_asset('run.js')}</script>\n</body></html>\n"
    )
