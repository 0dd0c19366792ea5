"""What ``toolconf matrix`` makes of its report files: the pages, the README block, a summary.

One function, ``matrix_pages``, so the command line only parses options and
writes files: the reports are loaded (one column per implementation, parts
merged), judged per SPEC section and per behaviour, and rendered as the
Markdown page, the HTML page and the README's behaviour block.
``replace_block`` puts that block between its markers in a README.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.analysis.behaviour_table import STATES, BehaviourTable, build_behaviour_table
from conformance.analysis.matrix import STATUSES, Matrix, build_matrix, load_reports
from conformance.analysis.matrix_html import matrix_html
from conformance.analysis.matrix_markdown import (
    README_BEGIN,
    README_END,
    matrix_markdown,
    readme_block,
)
from conformance.errors import ConformanceError
from conformance.suite.behaviours import load_behaviours
from conformance.suite.spec import Spec

__all__ = ["Pages", "matrix_pages", "replace_block"]


@dataclass(frozen=True, slots=True)
class Pages:
    """The rendered pages and the tables behind them."""

    matrix: Matrix
    behaviours: BehaviourTable | None
    markdown: str
    html: str
    readme: str
    """The behaviour block for a README ("" without behaviours)."""

    def summary(self) -> list[str]:
        """What the command prints: per implementation, its scenario totals and behaviour
        counts."""
        lines = [
            f"matrix: {len(self.matrix.rows)} implementations x "
            f"{len(self.matrix.sections)} sections"
            + (f" and {len(self.behaviours.rows)} behaviours" if self.behaviours else "")
        ]
        for index, row in enumerate(self.matrix.rows):
            totals = ", ".join(f"{row.total(s)} {s}" for s in STATUSES)
            lines.append(f"  {row.label}: {totals}")
            if self.behaviours is not None:
                counts = self.behaviours.counts(index)
                lines.append("    behaviours: " + ", ".join(f"{counts[s]} {s}" for s in STATES))
        return lines


def matrix_pages(
    reports: Sequence[Path],
    *,
    spec: Path,
    behaviours: Path | None,
    date: str,
    command: str,
    readme_link: str = "matrix.md",
) -> Pages:
    """The pages of ``reports``; ``behaviours`` None leaves the behaviour table out.
    ``readme_link`` is where the README block's rows link to (the Markdown page, as the
    README sees it). Raises ``ConformanceError`` for a malformed behaviours file."""
    loaded = load_reports(reports)
    model = Spec.load(spec)
    matrix = build_matrix(loaded, model)
    table: BehaviourTable | None = None
    if behaviours is not None:
        found, problems = load_behaviours(behaviours)
        if problems:
            raise ConformanceError(
                "the behaviours file has problems (toolconf lint shows them all): "
                + str(problems[0])
            )
        table = build_behaviour_table(loaded, found, model)
    provenance = {k: str(v) for k, v in model.provenances().items()}
    return Pages(
        matrix=matrix,
        behaviours=table,
        markdown=matrix_markdown(matrix, date=date, command=command, behaviours=table),
        html=matrix_html(
            matrix, date=date, command=command, behaviours=table, provenance=provenance
        ),
        readme="" if table is None else readme_block(table, link=readme_link, command=command),
    )


def replace_block(text: str, block: str) -> str:
    """``text`` with the part between the README markers (markers included) replaced by
    ``block``. Raises ``ConformanceError`` when the markers are missing or out of order."""
    start = text.find(README_BEGIN)
    end = text.find(README_END)
    if start < 0 or end < start:
        raise ConformanceError(
            f"no behaviour block to replace: the README needs the lines {README_BEGIN!r} "
            f"and {README_END!r}"
        )
    return text[:start] + block + text[end + len(README_END) :]
