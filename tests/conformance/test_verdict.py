"""The closing lines of a run: why scenarios were not applicable, one line per why, and the
verdict in plain words."""

from __future__ import annotations

from conformance.analysis.verdict import not_applicable_lines, verdict_line
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.runner import (
    HOST_PATHS_REASON,
    NOT_PLAYED_REASON,
    OTHER_PROFILE_REASON,
    REQUIRES_REASON,
)

NA = Outcome.NOT_APPLICABLE


def result(id_: str, outcome: Outcome = Outcome.PASS, **fields: str) -> ScenarioResult:
    return ScenarioResult(id=id_, outcome=outcome, **fields)  # type: ignore[arg-type]


def test_each_why_is_one_line_with_what_changes_it() -> None:
    results = [
        result("a"),
        result("p1", NA, reason=f"{OTHER_PROFILE_REASON}claude-code-latest, not documented"),
        result(
            "p2",
            NA,
            reason=f"{OTHER_PROFILE_REASON}claude-code-2.1.88, claude-code-latest, not documented",
        ),
        result("h", NA, reason=f"{HOST_PATHS_REASON} (/dev/null)"),
        result("f1", NA, reason=f"{REQUIRES_REASON}bash"),
        result("f2", NA, reason=f"{REQUIRES_REASON}bash, grep"),
        result("u", NA, kind="unsupported", message="raw begin not supported"),
        result("o", NA, reason="something else"),
    ]
    assert not_applicable_lines(results, "adapter ./x") == [
        "not applicable: 7 of 8",
        "  2 need a feature the implementation does not declare in hello (bash 2, grep 1): "
        "toolconf list --feature NAME shows them",
        "  2 hold only under other profiles (claude-code-latest 2, claude-code-2.1.88 1): "
        "--profile NAME judges them",
        "  1 aims at real host paths (/dev/null) and adapter ./x is not isolated: --host-paths "
        "runs it, at this host's risk (h)",
        "  1 something else (o)",
        "  1 was answered `unsupported` by the implementation (PROTO-UNSUPPORTED-1): u",
    ]
    assert not_applicable_lines([result("a")], "direct") == []


def test_a_profile_not_played_is_one_line() -> None:
    results = [result(x, NA, reason=f"{NOT_PLAYED_REASON}claude-code-latest") for x in "ab"]
    assert not_applicable_lines(results, "direct")[1] == (
        "  2 are not judged: the implementation does not play profile claude-code-latest"
    )


def test_the_verdict_says_what_passed_without_a_double_negative() -> None:
    assert verdict_line([result("a"), result("b")]) == "PASSED: all 2 scenarios passed."
    assert verdict_line([result("a"), result("n", NA)]) == (
        "PASSED: the 1 applicable scenario passed (1 of 2 not applicable)."
    )
    xfail = result("x", Outcome.XFAIL)
    assert verdict_line([result("a"), xfail]) == (
        "PASSED: 1 scenario passed and 1 failed as expected (xfail)."
    )
    assert verdict_line([result("n", NA)]) == (
        "PASSED, vacuously: none of the 1 scenario applies (why above)."
    )
    bad = [result("a"), result("f", Outcome.FAIL), result("c", Outcome.CRASH), xfail]
    assert verdict_line(bad) == (
        "FAILED: 2 of 4 scenarios did not pass (1 fail, 1 crash); 1 passed, "
        "1 failed as expected (xfail)."
    )
    assert "not passing" not in verdict_line(bad)
