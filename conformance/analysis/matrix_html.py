"""The matrix as one self-contained HTML page, laid out for reading.

Two tables of the same shape, rows over implementation columns: the
behaviour table (when given) and the SPEC sections. Each cell is shaded by
its behaviour-level pass share (red through yellow to green; blue for a
behaviour that ``differs``, grey for ``n/a``), shows its state and
figure, and has the per-level figures on hover. The header row and the row
headings stay in place while the table scrolls inside its frame, so the page
itself never runs wider than the window. A cell opens its scenarios in a
row right under its own row, those that did not hold first
(``assets/matrix.js``); the data it needs is one JSON block in the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, Final

from conformance.analysis.behaviour_table import (
    DIFFERS,
    NOT_APPLICABLE,
    STATES,
    BehaviourCell,
    BehaviourRow,
    BehaviourTable,
)
from conformance.analysis.fidelity import LEVELS
from conformance.analysis.matrix import STATUSES, Cell, Column, Entry, LevelTally, Matrix
from conformance.suite.evidence import Provenance

__all__ = ["matrix_html", "shade"]

_STATE_COLOURS: Final = {
    "kept": "hsl(120 50% 62%)",
    "differs": "hsl(210 60% 66%)",
    "partly": "hsl(45 85% 62%)",
    "not kept": "hsl(0 70% 66%)",
    "n/a": "hsl(220 10% 82%)",
}
"""The segments of a column's count bar."""
_RANK: Final = {"fail": 0, "not observed": 1, "pass": 2, "n/a": 3}


def shade(share: float | None, *, differs: bool = False) -> str:
    """The background of a cell whose behaviour-level pass share is ``share``: a hue from
    red (0) through yellow to green (1); shades of blue for a cell that differs; none for
    a cell with nothing observed."""
    if share is None:
        return ""
    if differs:
        return f"hsl(210 65% {round(93 - 13 * (1 - share))}%)"
    return f"hsl({round(120 * share)} 62% 84%)"


def _asset(name: str) -> str:
    return resources.files("conformance.analysis").joinpath("assets", name).read_text("utf-8")


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _levels_title(levels: Mapping[str, LevelTally]) -> str:
    return " · ".join(
        f"{level} {levels[level]} held" if levels[level].observed else f"{level} not observed"
        for level in LEVELS
    )


def _colhead(column: Column, extra: str = "") -> str:
    return (
        f'<th scope="col" class="colhead" title="{_esc(column.label)}, profile '
        f'{_esc(column.profile)}, started {_esc(column.started)}">'
        f'<span class="name">{_esc(column.name)}</span><span class="ver">{_esc(column.version)}'
        f"</span><code>{_esc(column.impl)}</code>{extra}</th>"
    )


def _count_bar(counts: Mapping[str, int]) -> str:
    total = sum(counts.values()) or 1
    segments = "".join(
        f'<span style="width:{100 * counts.get(s, 0) / total:.1f}%;'
        f'background:{_STATE_COLOURS[s]}"></span>'
        for s in STATES
        if counts.get(s)
    )
    words = " · ".join(f"{counts.get(s, 0)} {s}" for s in STATES)
    shown = " · ".join(f"{counts[s]} {s}" for s in STATES if counts.get(s))
    return (
        f'<span class="bar" title="{_esc(words)}">{segments}</span>'
        f'<span class="counts" title="{_esc(words)}">{_esc(shown)}</span>'
    )


def _provenance_badges(provenance: Mapping[Provenance, Sequence[str]]) -> str:
    return "".join(
        f'<span class="prov {kind}" title="{_esc(", ".join(ids))}">{kind}</span>'
        for kind, ids in provenance.items()
    )


def _behaviour_cell(cell: BehaviourCell, r: int, c: int, column: Column, title: str) -> str:
    state = cell.state
    css = "na" if state == NOT_APPLICABLE else f"st-{state.replace(' ', '-')}"
    background = shade(cell.share, differs=state == DIFFERS)
    style = f' style="background:{background}"' if background else ""
    figure = f"{cell.held}/{cell.observed}" if cell.observed else ""
    hover = f"{column.name} {column.version}: {title}: {state}. {_levels_title(cell.levels)}"
    return (
        f'<td class="cell {css}" data-t="b" data-r="{r}" data-c="{c}" tabindex="0" '
        f'aria-expanded="false" title="{_esc(hover)}"{style}><span class="state">'
        f'{_esc(state)}</span><span class="fig">{_esc(figure)}</span></td>'
    )


def _behaviour_rowhead(row: BehaviourRow, columns: Sequence[Column]) -> str:
    b = row.behaviour
    beyond = ""
    if row.beyond:
        releases = ", ".join(f"{columns[i].name} {columns[i].version}" for i in row.beyond)
        beyond = (
            f' <span class="beyond" title="the engine keeps it; {_esc(releases)} does not">'
            f"★ beyond {_esc(', '.join(columns[i].version for i in row.beyond))}</span>"
        )
    return (
        f'<th scope="row" class="rowhead" id="b-{_esc(b.id)}"><span class="title">'
        f'{_esc(b.title)}</span>{beyond}<br><span class="q">{_esc(b.question)}</span> '
        f"{_provenance_badges(row.provenance)}</th>"
    )


def _behaviour_table(table: BehaviourTable) -> str:
    width = len(table.columns) + 1
    heads = "".join(_colhead(c, _count_bar(table.counts(i))) for i, c in enumerate(table.columns))
    body: list[str] = []
    index = 0
    for group, rows in table.groups():
        body.append(f'<tr class="group"><th colspan="{width}">{_esc(group)}</th></tr>')
        for row in rows:
            cells = "".join(
                _behaviour_cell(cell, index, c, table.columns[c], row.behaviour.title)
                for c, cell in enumerate(row.cells)
            )
            body.append(f"<tr>{_behaviour_rowhead(row, table.columns)}{cells}</tr>")
            index += 1
    return (
        '<div class="wrap"><table class="grid" id="behaviours"><thead><tr>'
        f'<th scope="col" class="corner">behaviour</th>{heads}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _section_cell(cell: Cell, r: int, c: int) -> str:
    if not cell.entries:
        return '<td class="empty">–</td>'
    behaviour = cell.levels["behaviour"]
    background = shade(behaviour.share)
    style = f' style="background:{background}"' if background else ""
    css = "" if behaviour.observed else " na"
    counts = ", ".join(f"{cell.count(s)} {s}" for s in STATUSES if cell.count(s))
    hover = f"{counts}. {_levels_title(cell.levels)}"
    figure = f"{behaviour} held" if behaviour.observed else "not observed"
    failing = cell.count("fail")
    extra = f"{failing} fail" if failing else ""
    if cell.count("n/a"):
        extra += (", " if extra else "") + f"{cell.count('n/a')} n/a"
    return (
        f'<td class="cell{css}" data-t="s" data-r="{r}" data-c="{c}" tabindex="0" '
        f'aria-expanded="false" title="{_esc(hover)}"{style}><span class="state">'
        f'{_esc(figure)}</span><span class="fig">{_esc(extra)}</span></td>'
    )


def _section_table(matrix: Matrix) -> str:
    heads = "".join(_colhead(row.column) for row in matrix.rows)
    body = "".join(
        f'<tr><th scope="row" class="rowhead">{_esc(section)}</th>'
        + "".join(_section_cell(row.cells[section], s, c) for c, row in enumerate(matrix.rows))
        + "</tr>"
        for s, section in enumerate(matrix.sections)
    )
    return (
        '<div class="wrap"><table class="grid" id="sections"><thead><tr>'
        f'<th scope="col" class="corner">SPEC section</th>{heads}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _runs(matrix: Matrix) -> str:
    rows = "".join(
        f"<tr><td>{_esc(r.column.name)} {_esc(r.column.version)}</td><td><code>"
        f"{_esc(r.impl)}</code></td><td>{_esc(r.column.profile)}</td><td>{_esc(r.column.started)}"
        f"</td><td>{r.duration / 60:.1f} min</td>"
        + "".join(f"<td>{r.total(s)}</td>" for s in STATUSES)
        + "</tr>"
        for r in matrix.rows
    )
    heads = "".join(f"<th>{_esc(s)}</th>" for s in STATUSES)
    return (
        '<table class="runs"><tr><th>implementation</th><th>connector</th><th>profile</th>'
        f"<th>started</th><th>scenario time</th>{heads}</tr>{rows}</table>"
    )


def _data(matrix: Matrix, behaviours: BehaviourTable | None, provenance: Mapping[str, str]) -> str:
    """The JSON the drill-down reads: scenarios by index, each column's results, the order
    each cell lists its scenarios in."""
    index: dict[str, int] = {}
    scenarios: list[list[Any]] = []

    def add(entry: Entry) -> int:
        if entry.id not in index:
            index[entry.id] = len(scenarios)
            scenarios.append([entry.id, entry.title, list(entry.spec)])
        elif not scenarios[index[entry.id]][1] and entry.title:
            scenarios[index[entry.id]][1:] = [entry.title, list(entry.spec)]
        return index[entry.id]

    results: list[dict[int, list[str]]] = []
    for row in matrix.rows:
        column: dict[int, list[str]] = {}
        for entry in row.entries.values():
            column[add(entry)] = [
                entry.status,
                entry.outcome,
                entry.levels.get("behaviour", "unobserved"),
                entry.levels.get("identity", "unobserved"),
                entry.levels.get("rendering", "unobserved"),
                entry.message,
            ]
        results.append(column)
    sections = [
        {
            "name": section,
            "cells": [
                [
                    add(e)
                    for e in sorted(
                        row.cells[section].entries,
                        key=lambda e: (e.behaviour != "fail", _RANK[e.status], e.id),
                    )
                ]
                for row in matrix.rows
            ],
        }
        for section in matrix.sections
    ]
    rows: list[dict[str, Any]] = []
    for brow in behaviours.rows if behaviours is not None else ():
        cells = []
        for cell in brow.cells:
            order = []
            for judged in cell.ordered():
                if judged.entry.id not in index:
                    index[judged.entry.id] = len(scenarios)
                    scenarios.append([judged.entry.id, "", []])
                order.append(index[judged.entry.id])
            cells.append({"state": cell.state, "order": order})
        rows.append(
            {
                "title": brow.behaviour.title,
                "question": brow.behaviour.question,
                "spec": list(brow.behaviour.spec),
                "cells": cells,
            }
        )
    used = {spec_id for s in scenarios for spec_id in s[2]}
    if behaviours is not None:
        used |= {spec_id for row in behaviours.rows for spec_id in row.behaviour.spec}
    columns = behaviours.columns if behaviours is not None else [r.column for r in matrix.rows]
    payload = {
        "columns": [{"label": c.label} for c in columns],
        "scenarios": scenarios,
        "results": results,
        "sections": sections,
        "behaviours": rows,
        "provenance": {k: v for k, v in sorted(provenance.items()) if k in used},
    }
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def _legend() -> str:
    swatches = "".join(
        f'<span><span class="swatch" style="background:{colour}"></span>{_esc(state)}</span>'
        for state, colour in _STATE_COLOURS.items()
    )
    return (
        '<div class="legend"><span>shade: behaviour-level pass share</span>'
        '<span><span class="scale"></span> 0 → 100%</span>'
        f"<span>bar under each implementation: {swatches}</span></div>"
    )


def matrix_html(
    matrix: Matrix,
    *,
    date: str,
    command: str,
    behaviours: BehaviourTable | None = None,
    provenance: Mapping[str, str] | None = None,
) -> str:
    """The page: the behaviour table (when given), the SPEC sections, the runs.
    ``provenance`` is SPEC ID -> documented / measured / decided, shown in drill-downs."""
    regenerate = f"<p class='meta'>Regenerate: <code>{_esc(command)}</code></p>" if command else ""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
        "<title>toolconf: which contract each implementation keeps</title>",
        f"<style>{_asset('matrix.css')}</style></head>",
        "<body>",
        "<h1>Which contract each implementation keeps</h1>",
        f"<p class='meta'>Measured: {_esc(date)}. {len(matrix.rows)} implementations.</p>",
        regenerate,
        _legend(),
    ]
    if behaviours is not None:
        parts += [
            "<h2>Behaviours</h2>",
            "<p>Each row is a behaviour a user asks about, judged from its scenarios at the "
            "behaviour level only: how an implementation names or words an error never changes a "
            "cell. <b>kept</b>: every scenario whose behaviour was observed held; <b>partly</b>: "
            "some held; <b>not kept</b>: none held; <b>differs</b>: it did not hold only where "
            "the rule is this project's measurement of Claude Code or its own decision, not a "
            "documented rule; <b>n/a</b>: nothing observed. The figure is held / observed; hover "
            "for identity and rendering; click for the scenarios. <span class='beyond'>★ beyond"
            "</span> marks where this project's engine keeps a behaviour a Claude Code release "
            "does not.</p>",
            _behaviour_table(behaviours),
        ]
    parts += [
        "<h2>Per SPEC section</h2>",
        "<p>Each cell counts the scenarios citing a requirement of the section: held / observed "
        "at the behaviour level, then how many failed at any level and how many were not "
        "applicable. Click for the scenarios, failures first.</p>",
        _section_table(matrix),
        "<h2>Runs</h2>",
        _runs(matrix),
        '<script type="application/json" id="matrix-data">'
        + _data(matrix, behaviours, provenance or {})
        + "</script>",
        f"<script>{_asset('matrix.js')}</script>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(p for p in parts if p)
