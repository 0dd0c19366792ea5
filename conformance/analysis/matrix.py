"""``toolconf matrix``: several implementations side by side, per SPEC section.

From JSON-lines reports (``toolconf run --report jsonl``), one row per
implementation and one column per top-level section of SPEC.md. Each
scenario counts in every section whose requirements it cites, as one of:

- ``pass``: it passed and at least one of its assertions was observed;
- ``fail``: it failed, or the implementation crashed, hung or erred on it
  (an expected failure, ``xfail``, is still a failure here: the matrix shows
  behaviour, not what is tolerated);
- ``n/a``: not applicable (a feature the implementation does not list, or a
  setup it cannot be given, PROTO-UNSUPPORTED-1);
- ``not observed``: it passed, but every assertion read a field the
  implementation does not report (PROTO-UNREPORTED-1).

Reports of one implementation (the same ``impl`` and version) are merged,
the last result of a scenario winning, so a run made in parts is one row.
The Markdown page links each cell to a list of its scenarios with their
outcome and SPEC IDs; the HTML page is one self-contained file (inline
style, script and data) whose cells open the same list.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from conformance.analysis.fidelity import Report, load_report, merge_reports
from conformance.suite.spec import Spec

__all__ = [
    "STATUSES",
    "Cell",
    "Matrix",
    "Row",
    "build_matrix",
    "load_reports",
    "matrix_html",
    "matrix_markdown",
    "scenario_status",
]

STATUSES: Final = ("pass", "fail", "n/a", "not observed")
_FAILED: Final = frozenset({"fail", "error", "crash", "timeout", "xpass", "xfail"})


@dataclass(frozen=True, slots=True)
class Entry:
    """One scenario in one cell: its id, status, outcome, SPEC IDs and message."""

    id: str
    status: str
    outcome: str
    spec: tuple[str, ...]
    message: str = ""


@dataclass(slots=True)
class Cell:
    """One implementation's scenarios citing one section."""

    entries: list[Entry] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many of its scenarios have ``status``."""
        return sum(e.status == status for e in self.entries)

    @property
    def verdict(self) -> str:
        """``fail`` if any failed, else ``pass`` if any passed, else ``not observed`` or ``n/a``."""
        for status in ("fail", "pass", "not observed"):
            if self.count(status):
                return status
        return "n/a" if self.entries else "none"


@dataclass(slots=True)
class Row:
    """One implementation: its label, what it said of itself, and a cell per section."""

    label: str
    impl: str
    implementation: Mapping[str, Any]
    started: str
    duration: float
    cells: dict[str, Cell] = field(default_factory=dict)

    def total(self, status: str) -> int:
        """Scenarios of the whole run with ``status`` (each counted once)."""
        seen: dict[str, str] = {}
        for cell in self.cells.values():
            for entry in cell.entries:
                seen[entry.id] = entry.status
        return sum(s == status for s in seen.values())


@dataclass(slots=True)
class Matrix:
    """Rows of implementations over the sections of SPEC.md."""

    sections: list[str]
    rows: list[Row]


def scenario_status(result: Mapping[str, Any]) -> str:
    """One of ``STATUSES`` for a report's result record."""
    outcome = str(result.get("raw_outcome") or result.get("outcome"))
    if outcome == "not_applicable":
        return "n/a"
    if outcome in _FAILED:
        return "fail"
    levels = result.get("levels")
    if isinstance(levels, Mapping):
        verdicts = {
            str((v or {}).get("verdict")) for v in levels.values() if isinstance(v, Mapping)
        }
        if "pass" not in verdicts:
            return "not observed"
    return "pass"


def load_reports(paths: Sequence[Path]) -> list[Report]:
    """The reports, those of one implementation (impl and version) merged, in first-seen order."""
    groups: dict[tuple[str, str], list[Report]] = {}
    for path in paths:
        report = load_report(path)
        implementation = report.header.get("implementation") or {}
        key = (str(report.header.get("impl")), str(implementation.get("version")))
        groups.setdefault(key, []).append(report)
    return [merge_reports(group) for group in groups.values()]


def _label(report: Report) -> str:
    header = report.header
    implementation = header.get("implementation") or {}
    name = f"{implementation.get('name', '?')} {implementation.get('version', '')}".strip()
    return f"{name} ({header.get('impl', '?')})"


def build_matrix(reports: Sequence[Report], spec: Spec) -> Matrix:
    """The matrix of ``reports`` (one row each) over SPEC.md's top-level sections that
    hold requirements, headed as written (``12. Read``)."""
    sections = [s.heading for s in spec.top_sections() if spec.in_section(s.number)]
    by_id = {r.id: r.top.heading for r in spec if r.top is not None}
    rows: list[Row] = []
    for report in reports:
        row = Row(
            label=_label(report),
            impl=str(report.header.get("impl", "?")),
            implementation=dict(report.header.get("implementation") or {}),
            started=str(report.header.get("started", "")),
            duration=sum(float(r.get("duration") or 0.0) for r in report.results),
            cells={s: Cell() for s in sections},
        )
        for result in report.results:
            cited = tuple(str(s) for s in result.get("spec") or ())
            entry = Entry(
                id=str(result.get("id")),
                status=scenario_status(result),
                outcome=str(result.get("raw_outcome") or result.get("outcome")),
                spec=cited,
                message=str(result.get("message") or result.get("reason") or "")[:300],
            )
            for section in dict.fromkeys(by_id[s] for s in cited if s in by_id):
                row.cells[section].entries.append(entry)
        rows.append(row)
    return Matrix(sections=sections, rows=rows)


def _cell_text(cell: Cell) -> str:
    if not cell.entries:
        return "–"
    return ", ".join(f"{cell.count(s)} {s}" for s in STATUSES if cell.count(s))


def _anchor(row: int, column: int) -> str:
    return f"cell-{row}-{column}"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def matrix_markdown(matrix: Matrix, *, date: str, command: str) -> str:
    """The Markdown page: the run list, the matrix, then each cell's scenarios."""
    lines = [
        "# Compatibility matrix",
        "",
        f"- measured: {date}",
        f"- regenerate: `{command}`" if command else "",
        "",
        "Rows are implementations, columns the sections of SPEC.md. A cell counts the "
        "scenarios citing a requirement of that section: **pass**, **fail** (a failure, crash, "
        "timeout or error), **n/a** (not applicable: a feature or setup the implementation "
        "cannot be given) and **not observed** (passed, but every assertion read a field the "
        "implementation does not report). Each cell links to its scenarios.",
        "",
        "| implementation | connector | started | scenario time | pass | fail | n/a | "
        "not observed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in matrix.rows:
        totals = " | ".join(str(row.total(s)) for s in STATUSES)
        lines.append(
            f"| {row.label} | `{row.impl}` | {row.started} | {_minutes(row.duration)} | {totals} |"
        )
    lines += ["", "| implementation | " + " | ".join(matrix.sections) + " |"]
    lines.append("|---" * (len(matrix.sections) + 1) + "|")
    for r, row in enumerate(matrix.rows):
        cells = []
        for c, section in enumerate(matrix.sections):
            cell = row.cells[section]
            text = _cell_text(cell)
            cells.append(f"[{text}](#{_anchor(r, c)})" if cell.entries else text)
        lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    lines += ["", "## Scenarios per cell", ""]
    for r, row in enumerate(matrix.rows):
        for c, section in enumerate(matrix.sections):
            cell = row.cells[section]
            if not cell.entries:
                continue
            lines += [
                f'<a id="{_anchor(r, c)}"></a>',
                "",
                f"### {row.label}: {section}",
                "",
                f"{_cell_text(cell)}.",
                "",
                "| scenario | status | outcome | SPEC IDs | message |",
                "|---|---|---|---|---|",
            ]
            for entry in sorted(cell.entries, key=lambda e: (STATUSES.index(e.status), e.id)):
                message = entry.message.replace("|", "\\|").replace("\n", " ")[:160]
                lines.append(
                    f"| `{entry.id}` | {entry.status} | {entry.outcome} | "
                    f"{', '.join(entry.spec)} | {message} |"
                )
            lines.append("")
    return "\n".join(line for line in lines if line is not None) + "\n"


_STYLE: Final = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}
th,td{border:1px solid #ccc;padding:.3rem .5rem;font-size:.85rem;vertical-align:top}
th{background:#f3f3f3;text-align:left}
td.cell{cursor:pointer;min-width:5rem}
td.cell:focus{outline:2px solid #333}
.pass{background:#d9f2d9}.fail{background:#f8d0d0}.na{background:#eee;color:#777}
.unobserved{background:#fbf0c8}.none{background:#fff;color:#aaa}
#detail{border-top:2px solid #333;margin-top:1rem;padding-top:.5rem}
code{font-size:.8rem}
"""

_SCRIPT: Final = """
(function () {
  const data = JSON.parse(document.getElementById('matrix-data').textContent);
  const detail = document.getElementById('detail');
  function show(r, c) {
    const row = data.rows[r];
    const entries = row.cells[c];
    const title = document.createElement('h2');
    title.textContent = row.label + ': ' + data.sections[c];
    const table = document.createElement('table');
    table.id = 'detail-table';
    const head = table.insertRow();
    ['scenario', 'status', 'outcome', 'SPEC IDs', 'message'].forEach(function (name) {
      const th = document.createElement('th');
      th.textContent = name;
      head.appendChild(th);
    });
    entries.forEach(function (e) {
      const tr = table.insertRow();
      tr.className = e.css;
      [e.id, e.status, e.outcome, e.spec.join(', '), e.message].forEach(function (text, i) {
        const td = tr.insertCell();
        if (i === 0) {
          const code = document.createElement('code');
          code.textContent = text;
          td.appendChild(code);
        } else {
          td.textContent = text;
        }
      });
    });
    detail.replaceChildren(title, table);
  }
  document.querySelectorAll('td.cell').forEach(function (td) {
    const open = function () { show(Number(td.dataset.row), Number(td.dataset.col)); };
    td.addEventListener('click', open);
    td.addEventListener('keydown', function (event) {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); open(); }
    });
  });
})();
"""

_CSS: Final = {"pass": "pass", "fail": "fail", "n/a": "na", "not observed": "unobserved"}


def matrix_html(matrix: Matrix, *, date: str, command: str) -> str:
    """The self-contained HTML page: the matrix, and a panel a clicked cell fills."""
    esc = html.escape
    data = {
        "sections": matrix.sections,
        "rows": [
            {
                "label": row.label,
                "cells": [
                    [
                        {
                            "id": e.id,
                            "status": e.status,
                            "css": _CSS[e.status],
                            "outcome": e.outcome,
                            "spec": list(e.spec),
                            "message": e.message,
                        }
                        for e in sorted(
                            row.cells[s].entries, key=lambda e: (STATUSES.index(e.status), e.id)
                        )
                    ]
                    for s in matrix.sections
                ],
            }
            for row in matrix.rows
        ],
    }
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    runs = "".join(
        f"<tr><td>{esc(row.label)}</td><td><code>{esc(row.impl)}</code></td>"
        f"<td>{esc(row.started)}</td><td>{esc(_minutes(row.duration))}</td>"
        + "".join(f"<td>{row.total(s)}</td>" for s in STATUSES)
        + "</tr>"
        for row in matrix.rows
    )
    header = "".join(f"<th>{esc(s)}</th>" for s in matrix.sections)
    body = []
    for r, row in enumerate(matrix.rows):
        cells = []
        for c, section in enumerate(matrix.sections):
            cell = row.cells[section]
            css = {"n/a": "na", "not observed": "unobserved"}.get(cell.verdict, cell.verdict)
            cells.append(
                f'<td class="cell {css}" tabindex="0" data-row="{r}" data-col="{c}" '
                f'title="{esc(row.label)}: {esc(section)}">{esc(_cell_text(cell))}</td>'
            )
        body.append(f"<tr><th>{esc(row.label)}</th>{''.join(cells)}</tr>")
    regenerate = f"<p>Regenerate: <code>{esc(command)}</code></p>" if command else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>toolconf compatibility matrix</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>Compatibility matrix</h1>
<p>Measured: {esc(date)}.</p>
{regenerate}
<p>Rows are implementations, columns the sections of SPEC.md; a cell counts the scenarios
citing that section: pass, fail (failure, crash, timeout or error), n/a (not applicable) and
not observed (passed with every assertion on an unreported field). Click a cell for its
scenarios and SPEC IDs.</p>
<table id="runs"><tr><th>implementation</th><th>connector</th><th>started</th>
<th>scenario time</th><th>pass</th><th>fail</th><th>n/a</th><th>not observed</th></tr>{runs}</table>
<table id="matrix"><tr><th>implementation</th>{header}</tr>{"".join(body)}</table>
<div id="detail"><p>Click a cell to list its scenarios.</p></div>
<script type="application/json" id="matrix-data">{payload}</script>
<script>{_SCRIPT}</script>
</body>
</html>
"""
