"""Baselines and expected failures: what changed, and strictness both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.analysis.baseline import (
    Baseline,
    OutcomeChange,
    diff_baseline,
    load_baseline,
    merge_baseline,
    save_baseline,
)
from conformance.errors import ConformanceError
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.xfail import apply_expected_failures, load_expected_failures, unknown_entries


def result(scenario_id: str, outcome: Outcome, spec: tuple[str, ...] = ("A-1",)) -> ScenarioResult:
    return ScenarioResult(id=scenario_id, outcome=outcome, spec=spec)


def test_a_baseline_round_trips_and_reports_changed_and_new_scenarios(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    save_baseline(path, Baseline({"b": "pass", "a": "fail", "gone": "pass"}), {"name": "x"})
    baseline = load_baseline(path)
    assert baseline.outcomes == {"a": "fail", "b": "pass", "gone": "pass"}
    now = [
        result("a", Outcome.PASS, ("A-1", "B-2")),
        result("b", Outcome.PASS),
        result("c", Outcome.CRASH),
    ]
    assert diff_baseline(baseline, now) == [
        OutcomeChange("a", "fail", "pass", ("A-1", "B-2")),
        OutcomeChange("c", None, "crash", ("A-1",)),
    ]
    assert str(diff_baseline(baseline, now)[0]) == "a: fail -> pass  [A-1, B-2]"
    assert merge_baseline(baseline, now).outcomes == {
        "a": "pass",
        "b": "pass",
        "c": "crash",
        "gone": "pass",
    }


def test_a_baseline_records_raw_outcomes_not_expected_failure_ones() -> None:
    listed = apply_expected_failures(result("a", Outcome.FAIL), {"a": "known bug"})
    assert listed.outcome is Outcome.XFAIL
    assert diff_baseline(Baseline({"a": "fail"}), [listed]) == []


def test_a_file_that_is_no_baseline_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text('{"outcomes": []}')
    with pytest.raises(ConformanceError, match="cannot read the baseline"):
        load_baseline(path)


def test_expected_failures_are_strict() -> None:
    expected = {"f": "bug 12", "p": "bug 13", "n": "bug 14"}
    failed = apply_expected_failures(result("f", Outcome.TIMEOUT), expected)
    assert (failed.outcome, failed.raw_outcome, failed.reason, failed.bad) == (
        Outcome.XFAIL,
        Outcome.TIMEOUT,
        "bug 12",
        False,
    )
    passed = apply_expected_failures(result("p", Outcome.PASS), expected)
    assert (passed.outcome, passed.bad) == (Outcome.XPASS, True)
    assert "bug 13" in passed.reason
    assert (
        apply_expected_failures(result("n", Outcome.NOT_APPLICABLE), expected).outcome
        is Outcome.NOT_APPLICABLE
    )
    assert apply_expected_failures(result("x", Outcome.FAIL), expected).outcome is Outcome.FAIL
    assert unknown_entries(expected, ["f", "p"]) == ["n"]


def test_an_expected_failure_needs_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "xfail.yaml"
    path.write_text("a: known\nb:\n")
    with pytest.raises(ConformanceError, match=r"xfail.yaml:2: b: .*non-empty"):
        load_expected_failures(path)
    path.write_text("- a\n")
    with pytest.raises(ConformanceError, match="mapping"):
        load_expected_failures(path)
    path.write_text("")
    assert load_expected_failures(path) == {}
