"""Fidelity tables (conformance.analysis.fidelity): per SPEC ID and level, from a report."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from conformance.analysis.fidelity import (
    Report,
    explain,
    fidelity_markdown,
    id_statuses,
    load_report,
    merge_reports,
    summarize,
    write_jsonl,
)
from conformance.cli import main
from conformance.suite.spec import Spec

SPEC = """# S

## 1. One

- **A-ONE-1** (MUST) first.
- **A-TWO-1** (SHOULD) second.

### 1.1 Sub

- **A-THREE-1** (MUST) third.
"""


def _result(rid: str, outcome: str, spec: list[str], **levels: str) -> dict[str, Any]:
    return {
        "type": "result",
        "id": rid,
        "outcome": outcome,
        "spec": spec,
        "path": f"/s/{rid}.yaml",
        "levels": {name: {"verdict": verdict} for name, verdict in levels.items()},
    }


REPORT = Report(
    {"type": "header", "impl": "x", "implementation": {"name": "x", "version": "1"}},
    [
        _result(
            "s1", "fail", ["A-ONE-1"], behaviour="pass", identity="not_observed", rendering="fail"
        ),
        _result("s2", "fail", ["A-ONE-1", "A-TWO-1"], behaviour="fail", rendering="none"),
        _result("s3", "not_applicable", ["A-THREE-1"]),
        _result("s4", "timeout", ["A-TWO-1"]),
    ],
)


def test_each_id_gets_a_status_per_level_and_overall() -> None:
    statuses = {s.requirement.id: s for s in id_statuses(REPORT, Spec(SPEC))}
    one = statuses["A-ONE-1"]
    assert one.levels == {
        "behaviour": "disagrees",
        "identity": "not observable",
        "rendering": "disagrees",
    }
    assert one.overall == "disagrees"
    assert one.failing["behaviour"] == ["s2"]
    assert statuses["A-TWO-1"].levels["behaviour"] == "disagrees"  # the timeout counts too
    assert statuses["A-THREE-1"].overall == "not observable"
    counts = summarize(statuses.values())
    assert counts["overall"] == {"disagrees": 2, "not observable": 1}


def test_ids_are_placed_in_their_section() -> None:
    assert Spec(SPEC).section_labels() == {
        "A-ONE-1": "1 One",
        "A-TWO-1": "1 One",
        "A-THREE-1": "1.1 Sub",
    }


def test_an_expected_failures_file_explains_behaviour_disagreements() -> None:
    accounted = explain(REPORT, {"s2": "A-ONE-1 Decision", "s1": "stale: s1 holds on behaviour"})
    assert accounted.explained == {"s2": "A-ONE-1 Decision"}
    assert accounted.unexplained == ["s4"]
    assert accounted.stale == ["s1"]
    page = fidelity_markdown(
        REPORT, Spec(SPEC), command="cmd", date="2026-12-02", expected={"s2": "r"}
    )
    assert "1 kept by a Decision" in page
    assert "Not explained by a Decision: `s4`" in page
    assert "| A-ONE-1 | MUST | **disagrees** | disagrees | not observable | disagrees |" in page


def test_reports_run_in_parts_merge_and_round_trip(tmp_path: Path) -> None:
    first = Report(REPORT.header, list(REPORT.results[:2]))
    second = Report({"type": "header", "impl": "other"}, list(REPORT.results[1:]))
    merged = merge_reports([first, second])
    assert merged.header["impl"] == "x"
    assert [r["id"] for r in merged.results] == ["s1", "s2", "s3", "s4"]
    out = io.StringIO()
    write_jsonl(merged, out)
    path = tmp_path / "m.jsonl"
    path.write_text(out.getvalue())
    assert load_report(path).results == merged.results
    footer = json.loads(out.getvalue().splitlines()[-1])
    assert footer == {"type": "footer", "counts": {"fail": 2, "not_applicable": 1, "timeout": 1}}


def test_the_command_writes_the_page(tmp_path: Path) -> None:
    report = tmp_path / "r.jsonl"
    out = io.StringIO()
    write_jsonl(REPORT, out)
    report.write_text(out.getvalue())
    spec = tmp_path / "SPEC.md"
    spec.write_text(SPEC)
    page = tmp_path / "f.md"
    assert (
        main(["fidelity", str(report), "--spec-file", str(spec), "--report", f"markdown={page}"])
        == 0
    )
    assert page.read_text().startswith("# Fidelity: x 1 against SPEC.md")
