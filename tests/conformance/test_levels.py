"""Assertion levels (PROTO-LEVEL-1), fields not observed (PROTO-UNREPORTED-1, PROTO-INFER-1),
every assertion evaluated, bad_request to a valid request (PROTO-BADVALID-1), baseline
and mutant signatures, and the per-level report figures."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.analysis.baseline import Baseline, diff_baseline, load_baseline, merge_baseline
from conformance.analysis.console import describe_result, format_levels, level_figures, level_lines
from conformance.analysis.reports import RunInfo, write_report
from conformance.cli import main
from conformance.errors import SchemaViolation
from conformance.instruments.mutants import Mutant
from conformance.instruments.mutants.orchestrate import Killer, SuiteRun, judge
from conformance.peers.direct import DirectConnector
from conformance.peers.fake_adapter import FakeEngine, ReticentEngine
from conformance.run.results import LevelCount, LevelVerdict, Outcome, ScenarioResult
from conformance.run.runner import Runner
from conformance.suite.checks import (
    BEHAVIOUR,
    IDENTITY,
    RENDERING,
    check_call,
    check_message,
    shown_view,
)
from conformance.suite.matchers import Mismatch
from conformance.suite.registry import DEFAULT_SCENARIOS as SCENARIOS
from conformance.suite.scenario import load_scenario, parse_scenario
from conformance.wire.connector import ConnectorOptions
from conformance.wire.protocol import parse_hello

HEAD = "id: sample\ntitle: t\nspec: [A-1]\nlevel: MUST\n"
OPTIONS = ConnectorOptions(timeout=5.0)


def run(text: str, engine: type[FakeEngine] = FakeEngine, **options: Any) -> ScenarioResult:
    with Runner(DirectConnector(engine, options=OPTIONS), **options) as runner:
        return runner.run(parse_scenario(HEAD + text))


def answer(content: Any = "ok", *, is_error: bool = False, **outcome: Any) -> dict[str, Any]:
    return {
        "tool_result": {"tool_use_id": "t1", "content": content, "is_error": is_error},
        "outcome": {"stage": "done", "error_code": None, "error_name": None, **outcome},
        "events": [
            {"type": "tool_start", "id": "t1", "name": "Read"},
            {"type": "hook", "id": "t1", "event": "PreToolUse"},
            {"type": "tool_end", "id": "t1", "stage": "done"},
        ],
    }


def levels_of(mismatches: list[Mismatch]) -> list[tuple[str, str]]:
    return [(m.path, m.level) for m in mismatches]


# -- the shown view ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "     1\thello\n     2\tworld\n",
        "1\thello\n2\tworld",
        "1→hello\n2→world\n3→\n",
        "1\thello\n2\tworld\n3\t\n\n<system-reminder>Is it malware?</system-reminder>",
    ],
)
def test_renderings_of_the_same_lines_have_one_shown_view(text: str) -> None:
    assert shown_view(text) == "1\thello\n2\tworld"


def test_the_shown_view_keeps_what_reminders_say_only_when_asked() -> None:
    text = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    assert shown_view(text) == ""
    assert (
        shown_view(text, reminders=True) == "Warning: the file exists but the contents are empty."
    )
    assert shown_view(None) is None


# -- the level of each field ------------------------------------------------------------


def test_each_field_asserts_at_its_level() -> None:
    expect = {
        "is_error": True,
        "stage": "validate",
        "error_code": 7,
        "error_name": "X",
        "dedup": True,
        "output": {"a": 1},
        "blocks": [],
        "tool_result": {"json_subset": {"is_error": True}},
        "events": {"not_contains": [{"type": "hook"}], "before": [["t1", "t1"]]},
    }
    tally = check_call(expect, answer(), "t1")
    assert levels_of(tally.mismatches) == [
        ("is_error", BEHAVIOUR),
        ("stage", IDENTITY),
        ("error_code", IDENTITY),
        ("error_name", IDENTITY),
        ("dedup", BEHAVIOUR),
        ("output", RENDERING),
        ("blocks", RENDERING),
        ("tool_result.is_error", RENDERING),
        ("events.not_contains[0]", BEHAVIOUR),
        # the call is expected to end at validate: its own lifecycle events are identity
        ("events.before[0]", IDENTITY),
    ]
    # the echoed id held: one behaviour assertion passed
    assert (tally.passed[BEHAVIOUR], tally.failed[BEHAVIOUR]) == (1, 3)


def test_the_exact_text_of_a_success_is_rendering_and_what_it_shows_is_behaviour() -> None:
    exact = check_call({"content": "     1\thello\n"}, answer("1\thello\n2\t"), "t1")
    assert levels_of(exact.mismatches) == [("content", RENDERING)]
    assert exact.passed[BEHAVIOUR] == 1  # only the echoed id
    shows = {"shows": "     1\thello\n"}
    tally = check_call({"content": shows}, answer("1\thello\n2\t"), "t1")
    assert (tally.passed[BEHAVIOUR], tally.failed[RENDERING]) == (2, 1)
    assert levels_of(tally.mismatches) == [("content", RENDERING)]
    other = check_call({"content": shows}, answer("1\thullo"), "t1")
    assert levels_of(other.mismatches) == [("content", BEHAVIOUR), ("content", RENDERING)]


def test_a_shown_json_text_compares_by_value() -> None:
    shows = {"shows": '{"label": "A", "trail": []}'}
    tally = check_call({"content": shows}, answer('{"trail":[],"label":"A"}'), "t1")
    assert levels_of(tally.mismatches) == [("content", RENDERING)]
    other = check_call({"content": shows}, answer('{"label": "B", "trail": []}'), "t1")
    assert levels_of(other.mismatches) == [("content", BEHAVIOUR), ("content", RENDERING)]


def test_substring_checks_are_behaviour_on_the_shown_view_alone() -> None:
    contains = check_call({"content": {"contains": "     2\tb"}}, answer("1→a\n2→b"), "t1")
    assert (contains.mismatches, contains.passed[BEHAVIOUR], dict(contains.passed)) == (
        [],
        2,
        {BEHAVIOUR: 2},
    )
    absent = check_call({"content": {"not_contains": "     9\tz"}}, answer("9→z"), "t1")
    assert levels_of(absent.mismatches) == [("content", BEHAVIOUR)]


def test_an_operand_with_a_newline_at_an_end_names_whole_lines() -> None:
    text = "Found 2 files\n/r/a.txt\n/r/ba.txt"
    listed = {"all_of": [{"contains": "\n/r/a.txt\n/r/ba.txt\n"}, {"not_contains": "\n/r/b.txt\n"}]}
    assert check_call({"content": listed}, answer(text), "t1", cwd="/r").mismatches == []
    first = {"not_contains": "\nFound 2"}  # the first line has a newline before it too
    assert levels_of(check_call({"content": first}, answer(text), "t1").mismatches) == [
        ("content", BEHAVIOUR)
    ]
    numbered = {"not_contains": "\n2001\t"}  # a line's start, never trimmed away as an empty line
    shown = answer("2000\tx\n2001\ty")
    assert levels_of(check_call({"content": numbered}, shown, "t1").mismatches) == [
        ("content", BEHAVIOUR)
    ]


def test_each_part_of_a_composite_is_judged_at_its_own_level() -> None:
    default = {"all_of": [{"regex": "^1\\t1\\n"}, {"not_contains": "\n2001\t"}]}
    shown_too_much = answer("1\t1\n2000\t2000\n2001\t2001")
    tally = check_call({"content": default}, shown_too_much, "t1")
    assert levels_of(tally.mismatches) == [("content", BEHAVIOUR)]
    assert tally.passed[RENDERING] == 1  # the regex held
    wrong_format = check_call({"content": default}, answer("     1\t1"), "t1")
    assert levels_of(wrong_format.mismatches) == [("content", RENDERING)]
    either = {"any_of": [{"contains": "a"}, {"regex": "b"}]}
    loose = check_call({"content": either}, answer("c"), "t1")
    # alternatives of both levels: the whole disjunction is rendering
    assert levels_of(loose.mismatches) == [("content", RENDERING)]
    both = {"any_of": [{"contains": "a"}, {"not_contains": "c"}]}
    assert levels_of(check_call({"content": both}, answer("c"), "t1").mismatches) == [
        ("content", BEHAVIOUR)
    ]


def test_an_error_text_says_its_wording_and_leaves_out_behaviour() -> None:
    regex = check_call({"content": {"regex": "^ +1\\thello"}}, answer("1\thello"), "t1")
    assert levels_of(regex.mismatches) == [("content", RENDERING)]
    assert regex.passed[BEHAVIOUR] == 1  # only the echoed id
    error = answer("File does not exist: s3cret", is_error=True)
    by_actual = check_call({"content": {"contains": "Nope"}}, error, "t1")
    by_expect = check_call({"content": "Nope", "stage": "validate"}, answer("Nope."), "t1")
    assert levels_of(by_actual.mismatches) == [("content", RENDERING)]
    assert levels_of(by_expect.mismatches) == [("content", RENDERING), ("stage", IDENTITY)]
    leaked = check_call({"content": {"not_contains": "s3cret"}}, error, "t1")
    assert levels_of(leaked.mismatches) == [("content", BEHAVIOUR)]
    wrapped = {"all_of": [{"not_contains": "<tool_use_error>"}, {"regex": "^Permission"}]}
    denial = answer("<tool_use_error>Permission denied</tool_use_error>", is_error=True)
    assert levels_of(check_call({"content": wrapped}, denial, "t1").mismatches) == [
        ("content", BEHAVIOUR),
        ("content", RENDERING),
    ]


def test_events_of_a_call_that_never_started_are_identity() -> None:
    refused = answer(stage="validate")
    refused["events"] = [{"type": "tool_start", "id": "t1"}, {"type": "hook", "id": "t1"}]
    expect = {
        "stage": "validate",
        "events": {
            "contains": [{"type": "tool_end", "id": "t1"}, {"type": "hook", "id": "t2"}],
            "sequence": [{"type": "hook", "id": "t1"}, {"type": "tool_end", "id": "t1"}],
        },
    }
    tally = check_call(expect, refused, "t1")
    assert levels_of(tally.mismatches) == [
        ("events.contains[0]", IDENTITY),
        ("events.contains[1]", BEHAVIOUR),
        ("events.sequence[1]", IDENTITY),  # whole at identity; without the tool_end it holds
    ]
    assert tally.passed[BEHAVIOUR] == 2  # the echoed id and the sequence's hook


def test_a_call_the_step_says_never_started_is_one_too() -> None:
    cancelled = {"results": [answer(stage="aborted")], "batches": [["t1"]], "events": []}
    expect = {
        "results": [{"stage": "aborted"}],
        "events": {
            "contains": [{"type": "tool_end", "id": "t1"}],
            "not_contains": [{"type": "tool_start", "id": "t1"}],
        },
    }
    tally = check_message(expect, cancelled, ["t1"])
    assert levels_of(tally.mismatches) == [("events.contains[0]", IDENTITY)]
    assert tally.passed[IDENTITY] == 2  # the stage, and no tool_start: identity too
    started = {**expect, "events": {"contains": [{"type": "tool_end", "id": "t1"}]}}
    assert levels_of(check_message(started, cancelled, ["t1"]).mismatches) == [
        ("events.contains[0]", BEHAVIOUR)
    ]


def test_an_outcome_expectation_is_one_assertion_per_key() -> None:
    permission = {"behavior": "allow", "reason": "rule"}
    want = {"json_subset": {"stage": "done", "dedup": True, "permission": permission}}
    tally = check_call({"outcome": want}, answer(dedup=False, permission=None), "t1")
    assert levels_of(tally.mismatches) == [
        ("outcome.dedup", BEHAVIOUR),
        ("outcome.dedup", IDENTITY),
        ("outcome.permission", IDENTITY),
    ]
    assert tally.passed[IDENTITY] == 1
    unreported = frozenset({"outcome.permission", "dedup"})
    quiet = check_call({"outcome": want}, answer(), "t1", unreported=unreported)
    assert quiet.mismatches == []
    assert (quiet.not_observed[IDENTITY], quiet.not_observed[BEHAVIOUR]) == (2, 1)
    absent = check_call({"outcome": {"json_subset": {"dedup": False}}}, answer(), "t1")
    assert levels_of(absent.mismatches) == [("outcome.dedup", IDENTITY)]  # absent means false
    assert absent.passed[BEHAVIOUR] == 2
    literal = check_call({"outcome": {"stage": "done"}}, answer(), "t1")
    assert levels_of(literal.mismatches) == [
        ("outcome.error_code", IDENTITY),
        ("outcome.error_name", IDENTITY),
    ]
    assert (literal.passed[IDENTITY], literal.failed[IDENTITY]) == (1, 1)  # stage; no other keys


def test_an_outcome_field_is_unreported_by_its_name_or_as_an_outcome_key() -> None:
    for name in ("stage", "outcome.stage"):
        tally = check_call({"stage": "validate"}, answer(), "t1", unreported=frozenset({name}))
        assert (tally.mismatches, tally.not_observed[IDENTITY]) == ([], 1)


def test_unreported_event_types_and_all_events() -> None:
    expect = {"events": {"contains": [{"type": "hook"}], "before": [["t1", "t1"]]}}
    hooks = check_call(expect, answer(), "t1", unreported=frozenset({"events.hook"}))
    assert levels_of(hooks.mismatches) == [("events.before[0]", BEHAVIOUR)]
    assert hooks.not_observed[BEHAVIOUR] == 1
    everything = check_call(expect, answer(), "t1", unreported=frozenset({"events"}))
    assert (everything.mismatches, everything.not_observed[BEHAVIOUR]) == ([], 2)


def test_a_message_checks_batches_and_events_as_behaviour_unless_unreported() -> None:
    first = answer()
    response = {"results": [first], "batches": [["t1"]], "events": first["events"]}
    expect = {"batches": [["x"]], "events": {"max_concurrent": 0}, "results": [{"stage": "call"}]}
    tally = check_message(expect, response, ["t1"])
    assert levels_of(tally.mismatches) == [
        ("results[0].stage", IDENTITY),
        ("batches[0][0]", BEHAVIOUR),
        ("events.max_concurrent", BEHAVIOUR),
    ]
    quiet = check_message(expect, response, ["t1"], unreported=frozenset({"batches", "events"}))
    assert levels_of(quiet.mismatches) == [("results[0].stage", IDENTITY)]
    assert quiet.not_observed[BEHAVIOUR] == 2


# -- not observed, through a whole run --------------------------------------------------


def test_assertions_on_unreported_fields_are_not_observed_and_the_rest_still_run() -> None:
    result = run(
        "steps:\n"
        "  - call: {name: Read, id: r}\n"
        "    expect: {is_error: false, stage: done, error_name: null, content: {shows: 'ok: Read'},"
        " events: {not_contains: [{type: hook}]}}\n",
        ReticentEngine,
    )
    assert result.outcome is Outcome.PASS, result.message
    assert result.levels[IDENTITY] == LevelCount(passed=0, failed=0, not_observed=2)
    assert result.verdict(IDENTITY) is LevelVerdict.NOT_OBSERVED
    assert result.verdict(BEHAVIOUR) is LevelVerdict.PASS
    assert result.levels[BEHAVIOUR].not_observed == 1
    failing = run(
        "steps:\n  - call: {name: Read}\n    expect: {stage: done, content: {shows: 'nope'}}\n",
        ReticentEngine,
    )
    assert failing.outcome is Outcome.FAIL
    assert levels_of(list(failing.mismatches)) == [("content", BEHAVIOUR), ("content", RENDERING)]


def test_hello_names_unreported_fields_and_inferences_within_the_schema() -> None:
    hello = parse_hello(ReticentEngine().handle({"seq": 1, "cmd": "hello", "protocol": 1}))
    assert hello.unreported == frozenset(ReticentEngine.UNREPORTED)
    assert hello.inferences[0]["table"] == "conformance.peers.fake_adapter.DEDUP_TABLE"
    bad = {**FakeEngine().handle({"seq": 1, "cmd": "hello", "protocol": 1}), "unreported": ["x"]}
    with pytest.raises(SchemaViolation, match=r"\$\.unreported\[0\]"):
        parse_hello(bad)
    assert (
        parse_hello(FakeEngine().handle({"seq": 1, "cmd": "hello", "protocol": 1})).unreported
        == frozenset()
    )


def test_the_console_names_unreported_fields_and_inferences(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "a" / "s.yaml"
    scenario.parent.mkdir()
    scenario.write_text(
        "id: s\ntitle: t\nspec: [A-1]\nlevel: MUST\n"
        "steps:\n  - call: {name: Read}\n    expect: {stage: done, content: 'ok: Read'}\n"
    )
    impl = "direct:conformance.peers.fake_adapter:ReticentEngine"
    assert main(["run", str(scenario), "--impl", impl, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "not reported by the implementation: error_code, error_name, events.hook, stage" in out
    assert (
        "inferred: dedup from the tool_result text through "
        "conformance.peers.fake_adapter.DEDUP_TABLE" in out
    )
    assert "identity - (0/0)" in out
    assert "assertions not observed: identity 1" in out


# -- every assertion evaluated ---------------------------------------------------------


def test_a_scenario_with_two_failing_steps_reports_both_and_the_final_checks() -> None:
    result = run(
        "steps:\n"
        "  - call: {name: Read}\n    expect: {content: {shows: 'no'}}\n"
        "  - call: {name: Edit}\n    expect: {stage: validate}\n"
        "  - call: {name: Write}\n    expect: {is_error: false}\n"
        "final:\n  files:\n    never.txt: {text: x}\n"
    )
    assert result.outcome is Outcome.FAIL
    assert [(m.step, m.level, m.path) for m in result.mismatches] == [
        (1, BEHAVIOUR, "content"),
        (1, RENDERING, "content"),
        (2, IDENTITY, "stage"),
        (None, BEHAVIOUR, 'final.files["never.txt"]'),
    ]
    assert (result.step, result.where) == (1, "step 1 (call Read, line 6)")
    assert "(+3 more)" in result.message
    assert result.levels[BEHAVIOUR] == LevelCount(passed=4, failed=2, not_observed=0)
    assert {level: result.verdict(level) for level in result.levels} == {
        BEHAVIOUR: LevelVerdict.FAIL,
        IDENTITY: LevelVerdict.FAIL,
        RENDERING: LevelVerdict.FAIL,
    }
    text = describe_result(result)
    assert "step 2 [identity] stage: expected 'validate', got 'done'" in text
    assert 'final [behaviour] final.files["never.txt"]: the file does not exist' in text


def test_a_mismatch_path_names_the_placeholder_not_the_sandbox() -> None:
    result = run(
        "steps:\n  - call: {name: Read}\n    expect: {output: {json_subset: {'{root}/a': 1}}}\n"
    )
    assert [m.path for m in result.mismatches] == ["output"]
    keyed = run(
        "steps:\n  - call: {name: Read}\n    expect: {outcome: {json_subset: {'{root}/a': 1}}}\n"
    )
    assert [m.path for m in keyed.mismatches] == ["outcome.{root}/a"]


def test_the_deciding_levels_choose_pass_or_fail_and_the_rest_is_still_reported() -> None:
    text = "steps:\n  - call: {name: Read}\n    expect: {is_error: false, stage: validate}\n"
    assert run(text).outcome is Outcome.FAIL
    lenient = run(text, levels=(BEHAVIOUR,))
    assert lenient.outcome is Outcome.PASS
    assert lenient.verdict(IDENTITY) is LevelVerdict.FAIL
    assert levels_of(list(lenient.mismatches)) == [("stage", IDENTITY)]


def test_run_levels_behaviour_passes_a_run_that_fails_only_in_identity(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "a" / "s.yaml"
    scenario.parent.mkdir()
    scenario.write_text(
        "id: s\ntitle: t\nspec: [A-1]\nlevel: SHOULD\n"
        "steps:\n  - call: {name: Read}\n    expect: {is_error: false, error_name: Nope}\n"
    )
    args = ["run", str(scenario), "--impl", "direct:conformance.peers.fake_adapter:FakeEngine"]
    assert main([*args, "--no-progress"]) == 1
    assert "failing scenarios: 1 SHOULD" in capsys.readouterr().out
    assert main([*args, "--no-progress", "--levels", "behaviour"]) == 0
    out = capsys.readouterr().out
    assert "deciding levels: behaviour (the others are reported only)" in out
    assert "levels: behaviour 100% (1/1), identity 0% (0/1), rendering - (0/0)" in out
    assert "PASS s  t" in out  # still listed, with the difference
    assert "step 1 [identity] error_name: expected 'Nope', got null" in out


def test_run_levels_option_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--levels", "behaviour,looks"])
    assert "unknown assertion level looks" in capsys.readouterr().err


def _padded(match: re.Match[str]) -> str:
    return f"{int(match.group(1)):6d}\t"


class RenderedOtherwise:
    """The reference with Read's lines numbered in 6 columns and another reminder, error texts
    reworded, and no ``stage``, ``error_code`` or ``error_name`` reported: what an
    implementation that behaves the same and says it otherwise looks like."""

    def __init__(self) -> None:
        from reference.engine import Engine  # noqa: PLC0415  (the unit tests of the runner need no engine)

        self.engine = Engine()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        response = self.engine.handle(request)
        if request.get("cmd") == "hello":
            response["unreported"] = ["stage", "error_code", "error_name"]
        result = response.get("tool_result")
        if result and isinstance(result.get("content"), str):
            text = result["content"]
            if result.get("is_error"):
                result["content"] = f"Error: {text}"
            elif (numbered := re.sub(r"^(\d+)\t", _padded, text, flags=re.M)) != text:
                result["content"] = f"{numbered}\n<system-reminder>Mind malware.</system-reminder>"
        return response


def test_an_implementation_that_only_renders_otherwise_passes_in_behaviour() -> None:
    scenarios = [
        load_scenario(SCENARIOS / "read" / f"{name}.yaml")
        for name in (
            "read-format-cat-n-lines",
            "read-binary-nul-refused",
            "read-dedup-not-after-edit",
        )
    ]
    with Runner(DirectConnector(RenderedOtherwise, options=OPTIONS), levels=(BEHAVIOUR,)) as runner:
        results = [runner.run(s) for s in scenarios]
    assert [r.outcome for r in results] == [Outcome.PASS] * 3, [r.message for r in results]
    assert all(r.verdict(BEHAVIOUR) is LevelVerdict.PASS for r in results)
    assert {r.verdict(IDENTITY) for r in results} <= {LevelVerdict.NOT_OBSERVED, LevelVerdict.NONE}
    assert any(r.verdict(RENDERING) is LevelVerdict.FAIL for r in results)


# -- bad_request to a valid request ---------------------------------------------------


class RefusingEngine(FakeEngine):
    """The fake, refusing every Edit call (and ``begin`` when ``refuse_begin``)."""

    refuse_begin: ClassVar[bool] = False
    calls: ClassVar[list[str]] = []

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        cmd = request.get("cmd")
        self.calls.append(str(cmd))
        refused = (cmd == "begin" and self.refuse_begin) or (
            cmd == "call" and request["tool_use"]["name"] == "Edit"
        )
        if refused:
            error = {"kind": "bad_request", "message": "I do not like it"}
            return {"seq": request.get("seq"), "error": error}
        return super().handle(request)


def test_a_bad_request_answer_to_a_valid_call_fails_the_scenario_and_the_session_goes_on() -> None:
    RefusingEngine.calls = []
    RefusingEngine.refuse_begin = False
    result = run(
        "steps:\n  - call: {name: Edit}\n  - call: {name: Read}\n    expect: {is_error: false}\n",
        RefusingEngine,
    )
    assert result.outcome is Outcome.FAIL
    ((mismatch,),) = [result.mismatches]
    assert (mismatch.step, mismatch.level, mismatch.path) == (1, BEHAVIOUR, "call")
    assert "refused as bad_request" in str(mismatch)
    assert RefusingEngine.calls == ["hello", "begin", "call", "call", "end"]


def test_a_bad_request_answer_to_begin_fails_the_scenario() -> None:
    RefusingEngine.calls = []
    RefusingEngine.refuse_begin = True
    try:
        result = run("steps:\n  - call: {name: Read}\n", RefusingEngine)
    finally:
        RefusingEngine.refuse_begin = False
    assert (result.outcome, result.where) == (Outcome.FAIL, "setup")
    assert [m.path for m in result.mismatches] == ["begin"]
    assert "call" not in RefusingEngine.calls


# -- baselines and mutants count a change from one failure to another -----------------


def failed(
    *signature: tuple[int | None, str, str], outcome: Outcome = Outcome.FAIL
) -> ScenarioResult:
    mismatches = tuple(Mismatch(p, 1, 2, level=lv, step=s) for s, lv, p in signature)
    return ScenarioResult(id="a", outcome=outcome, spec=("A-1",), mismatches=mismatches)


def test_a_baseline_reports_a_change_from_one_failure_to_another(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    from conformance.analysis.baseline import save_baseline  # noqa: PLC0415

    before = failed((1, IDENTITY, "stage"), (None, BEHAVIOUR, "final.files.a"))
    save_baseline(path, merge_baseline(Baseline(), [before]), {"name": "x"})
    recorded = load_baseline(path)
    assert diff_baseline(recorded, [before]) == []
    (change,) = diff_baseline(recorded, [failed((1, IDENTITY, "stage"), (2, BEHAVIOUR, "content"))])
    assert (change.before, change.after) == ("fail", "fail")
    assert str(change) == (
        "a: fail -> fail (no longer failing: final behaviour final.files.a,"
        " newly failing: step 2 behaviour content)  [A-1]"
    )
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": 1, "outcomes": {"a": "fail"}}))
    assert diff_baseline(load_baseline(old), [failed((2, BEHAVIOUR, "content"))]) == []


def test_a_mutant_kills_with_a_scenario_the_control_fails_otherwise() -> None:
    mutant = Mutant(name="m", description="a fault", breaks=("A-1",), patch=lambda: None)
    same = Killer(
        id="s", outcome="fail", spec=("A-1",), signature=frozenset({(1, IDENTITY, "stage")})
    )
    other = Killer(
        id="s", outcome="fail", spec=("A-1",), signature=frozenset({(1, BEHAVIOUR, "content")})
    )
    control = SuiteRun(impl="direct", failed=(same,), scenarios=1)
    assert judge(mutant, SuiteRun(impl="mutant:m", failed=(same,)), control).status == "SURVIVED"
    assert judge(mutant, SuiteRun(impl="mutant:m", failed=(other,)), control).ok


def test_a_mutant_killed_only_on_identity_or_rendering_is_not_killed_by_behaviour() -> None:
    mutant = Mutant(name="m", description="a fault", breaks=("A-1",), patch=lambda: None)
    control = SuiteRun(impl="direct", scenarios=2)

    def killed(*killers: Killer) -> bool:
        return judge(mutant, SuiteRun(impl="mutant:m", failed=killers), control).by_behaviour

    worded = frozenset({(1, IDENTITY, "stage"), (1, RENDERING, "content")})
    assert not killed(Killer(id="s", outcome="fail", spec=("A-1",), signature=worded))
    did = frozenset({(1, BEHAVIOUR, "content")})
    assert killed(Killer(id="s", outcome="fail", spec=("A-1",), signature=did))
    assert killed(Killer(id="s", outcome="crash", spec=("A-1",)))
    assert not killed(Killer(id="s", outcome="fail", spec=("B-1",), signature=did))  # not its own


# -- report figures -------------------------------------------------------------------


def judged(sid: str, level: str, **counts: LevelCount) -> ScenarioResult:
    outcome = Outcome.FAIL if any(c.failed for c in counts.values()) else Outcome.PASS
    mismatches = tuple(
        Mismatch("content", 1, 2, level=lv, step=1) for lv, c in counts.items() if c.failed
    )
    return ScenarioResult(
        id=sid, outcome=outcome, level=level, area="x", levels=counts, mismatches=mismatches
    )


RESULTS = [
    judged(
        "a", "MUST", behaviour=LevelCount(2), identity=LevelCount(1), rendering=LevelCount(0, 1)
    ),
    judged(
        "b", "MUST", behaviour=LevelCount(1), identity=LevelCount(0, 0, 2), rendering=LevelCount(1)
    ),
    judged("c", "SHOULD", behaviour=LevelCount(0, 1), rendering=LevelCount(0, 1)),
    ScenarioResult(
        id="d", outcome=Outcome.CRASH, level="MUST", levels={"behaviour": LevelCount(0, 1)}
    ),
]


def test_level_figures_count_scenarios_whose_observed_assertions_all_held() -> None:
    figures = level_figures(RESULTS)
    assert (figures[BEHAVIOUR].held, figures[BEHAVIOUR].observed) == (2, 3)
    assert (figures[IDENTITY].held, figures[IDENTITY].observed, figures[IDENTITY].unobserved) == (
        1,
        1,
        1,
    )
    assert format_levels(RESULTS) == "behaviour 66% (2/3), identity 100% (1/1), rendering 33% (1/3)"
    assert level_lines(RESULTS) == [
        "levels: behaviour 66% (2/3), identity 100% (1/1), rendering 33% (1/3)",
        "  MUST: behaviour 100% (2/2), identity 100% (1/1), rendering 50% (1/2)",
        "  SHOULD: behaviour 0% (0/1), identity - (0/0), rendering 0% (0/1)",
        "failing scenarios: 1 MUST, 1 SHOULD",
        "assertions not observed: identity 2",
    ]


def test_reports_carry_verdicts_counts_levels_and_figures() -> None:
    info = RunInfo(impl="x", unreported=["stage"], levels=(BEHAVIOUR,))
    out = io.StringIO()
    write_report("jsonl", RESULTS, info, out)
    header, first, *_, footer = [json.loads(line) for line in out.getvalue().splitlines()]
    assert (header["levels"], header["unreported"]) == (["behaviour"], ["stage"])
    assert first["levels"]["rendering"] == {
        "verdict": "fail",
        "passed": 0,
        "failed": 1,
        "not_observed": 0,
    }
    assert first["mismatches"][0]["level"] == RENDERING
    assert footer["levels"]["MUST"]["behaviour"] == {"held": 2, "observed": 2, "unobserved": 0}
    assert (footer["levels"]["MUST"]["failing"], footer["levels"]["SHOULD"]["failing"]) == (1, 1)
    markdown = io.StringIO()
    write_report("markdown", RESULTS, info, markdown)
    assert "| SHOULD | 0% (0/1) | - (0/0) | 0% (0/1) | 1 |" in markdown.getvalue()
    assert "Not reported by the implementation: stage." in markdown.getvalue()
    junit = io.StringIO()
    write_report("junit", RESULTS, info, junit)
    root = ET.fromstring(junit.getvalue().split("\n", 1)[1])
    suite = root.find("testsuite[@name='x']")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["levels"] == "behaviour 66% (2/3), identity 100% (1/1), rendering 33% (1/3)"
    case = suite.find("testcase[@name='a']/properties")
    assert case is not None
    assert {p.get("name"): p.get("value") for p in case}["rendering"] == "fail"


def test_the_shown_view_names_a_path_under_the_cwd_either_way() -> None:
    """PROTO-LEVEL-1: an absolute path under the cwd and the cwd-relative one show the same file."""
    cwd = "/abs/root"
    absolute = "/abs/root/a.txt\n/abs/root/sub/b.txt\n/elsewhere/c.txt"
    relative = "a.txt\nsub/b.txt\n/elsewhere/c.txt"
    assert shown_view(absolute, cwd=cwd) == shown_view(relative, cwd=cwd)
    assert shown_view("/abs/rootless/x", cwd=cwd) == "/abs/rootless/x"  # not under it
    assert shown_view(absolute) == absolute  # no cwd, no rewriting
