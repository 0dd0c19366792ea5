"""benchmarks.left_differences: each scenario left is listed once, under its reason."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.left_differences import NOT_MODELLED, page, read_results, reason


def _result(scenario: str, outcome: str, mismatches: list[dict[str, object]]) -> dict[str, object]:
    verdict = "fail" if any(m["level"] == "behaviour" for m in mismatches) else "pass"
    return {
        "type": "result",
        "id": scenario,
        "outcome": outcome,
        "levels": {"behaviour": {"verdict": verdict}},
        "mismatches": mismatches,
    }


def _mismatch(
    path: str, expected: object, actual: object, level: str = "rendering"
) -> dict[str, object]:
    return {"level": level, "path": path, "expected": expected, "actual": actual}


def test_a_rerun_replaces_the_whole_runs_result(tmp_path: Path) -> None:
    whole, rerun = tmp_path / "whole.jsonl", tmp_path / "rerun.jsonl"
    whole.write_text(json.dumps(_result("a", "fail", [_mismatch("content", "x", "y")])) + "\n")
    rerun.write_text(json.dumps(_result("a", "pass", [])) + "\n")
    assert read_results([whole, rerun])["a"]["outcome"] == "pass"


def test_reasons_come_from_the_mismatches_and_the_rest_is_listed_as_not_modelled() -> None:
    node = _result("w", "fail", [_mismatch("content", "x", "ENOTDIR: not a directory")])
    pool = _result("registry-x", "fail", [_mismatch("tools", [], [{"name": "Agent"}])])
    other = _result("z", "fail", [_mismatch("content", "a", "b")])
    assert reason(node).startswith("unknowable: Node's own error texts")
    assert reason(pool).startswith("unknowable: the CLI's tool pool")
    assert reason(other).startswith(NOT_MODELLED)
    assert '"b"' in reason(other)


def test_the_page_counts_what_ran_and_marks_a_behaviour_failure() -> None:
    results = {
        "p": _result("p", "pass", []),
        "n": _result("n", "not_applicable", []),
        "b": _result("b", "fail", [_mismatch("is_error", True, False, "behaviour")]),
    }
    text = page("9.9.9", results)
    assert "Scenarios that ran: 2; passing every level: 1; left: 1." in text
    assert "- `b` (behaviour)" in text
    assert "`n`" not in text
