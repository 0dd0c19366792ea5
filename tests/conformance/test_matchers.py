"""Matchers: literals, one-key matcher mappings, and event-order checks."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.suite.checks import blocks_view, check_call, check_message, text_view
from conformance.suite.matchers import MISSING, Mismatch, is_matcher, match, match_events


def test_a_literal_is_exact_json_equality() -> None:
    assert match("a", "a") == []
    assert match(1, 1.0) == []
    assert match(True, 1, "is_error") == [Mismatch("is_error", True, 1)]
    assert match(None, MISSING, "x") == [Mismatch("x", None, MISSING)]
    assert match([1, 2], [1, 2]) == []


def test_a_literal_mapping_compares_whole_and_names_the_deepest_difference() -> None:
    assert match({"equals": {"a": {"b": 1}}}, {"a": {"b": 2}}, "out") == [Mismatch("out.a.b", 1, 2)]
    extra = match({"equals": {"a": 1}}, {"a": 1, "b": 2}, "out")
    assert [m.path for m in extra] == ["out.b"]


@pytest.mark.parametrize(
    ("matcher", "actual", "ok"),
    [
        ({"contains": "ell"}, "hello", True),
        ({"contains": "xyz"}, "hello", False),
        ({"contains": "x"}, 5, False),
        ({"not_contains": "xyz"}, "hello", True),
        ({"not_contains": "ell"}, "hello", False),
        ({"regex": "^h.*o$"}, "hello", True),
        ({"regex": "^e"}, "hello", False),
        ({"max_bytes": 5}, "héllo"[:4], True),
        ({"max_bytes": 5}, "héllo", False),
        ({"absent": True}, MISSING, True),
        ({"absent": True}, None, True),
        ({"absent": True}, 0, False),
        ({"absent": False}, 0, True),
        ({"absent": False}, None, False),
        ({"any_of": ["a", {"contains": "b"}]}, "abc", True),
        ({"any_of": ["a", {"contains": "z"}]}, "abc", False),
        ({"all_of": [{"contains": "a"}, {"contains": "c"}]}, "abc", True),
        ({"all_of": [{"contains": "a"}, {"contains": "z"}]}, "abc", False),
    ],
)
def test_string_and_combining_matchers(matcher: dict[str, Any], actual: Any, ok: bool) -> None:
    assert is_matcher(matcher)
    assert (match(matcher, actual, "f") == []) is ok


def test_json_subset_recurses_lists_keep_their_length_and_matchers_nest() -> None:
    actual = {"type": "text", "file": {"content": "a\nb", "numLines": 2}, "list": [1, 2]}
    assert match({"json_subset": {"file": {"numLines": 2}}}, actual) == []
    assert match({"json_subset": {"file": {"content": {"contains": "b"}}}}, actual) == []
    assert match({"json_subset": {"gone": {"absent": True}}}, actual) == []
    short = match({"json_subset": {"list": [1]}}, actual, "output")
    assert [m.path for m in short] == ["output.list"]
    missing = match({"json_subset": {"nope": 1}}, actual, "output")
    assert [(m.path, m.actual) for m in missing] == [("output.nope", MISSING)]


def test_a_mismatch_reads_as_path_expected_and_actual() -> None:
    (mismatch,) = match("validate", "done", "stage")
    assert str(mismatch) == "stage: expected 'validate', got 'done'"


def test_content_views_join_text_blocks_and_wrap_strings() -> None:
    blocks = [
        {"type": "text", "text": "a"},
        {"type": "image", "source": {}},
        {"type": "text", "text": "b"},
    ]
    assert text_view(blocks) == "a\nb"
    assert text_view("plain") == "plain"
    assert blocks_view("plain") == [{"type": "text", "text": "plain"}]


def answer(content: Any = "ok", **outcome: Any) -> dict[str, Any]:
    return {
        "tool_result": {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": content,
            "is_error": False,
        },
        "outcome": {"stage": "done", "error_code": None, "error_name": None, **outcome},
        "events": [{"type": "tool_start", "id": "t1"}, {"type": "tool_end", "id": "t1"}],
    }


def test_check_call_reads_each_field_from_its_place() -> None:
    response = answer(
        [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}], output={"k": 1}
    )
    expect = {
        "is_error": False,
        "content": "one\ntwo",
        "blocks": {"json_subset": [{"text": "one"}, {"type": "text"}]},
        "stage": "done",
        "error_code": None,
        "dedup": False,
        "output": {"json_subset": {"k": 1}},
        "events": {"contains": [{"type": "tool_end"}]},
    }
    assert check_call(expect, response, "t1").mismatches == []


def test_check_call_always_checks_the_echoed_tool_use_id() -> None:
    (mismatch,) = check_call({}, answer(), "other").mismatches
    assert mismatch.path == "tool_result.tool_use_id"


def test_check_message_prefixes_result_paths_with_their_index() -> None:
    first, second = answer(), answer(stage="validate")
    second["tool_result"] = {**second["tool_result"], "tool_use_id": "t2"}
    response = {"results": [first, second], "batches": [["t1", "t2"]], "events": []}
    found = check_message(
        {"results": [None, {"stage": "done"}], "batches": [["t1"], ["t2"]]}, response, ["t1", "t2"]
    )
    assert [m.path for m in found.mismatches] == ["results[1].stage", "batches"]


def events(*pairs: str) -> list[dict[str, str]]:
    """``"+a"`` is a's tool_start, ``"-a"`` its tool_end."""
    return [{"type": "tool_start" if p[0] == "+" else "tool_end", "id": p[1:]} for p in pairs]


SERIAL = events("+a", "-a", "+b", "-b")
PARALLEL = events("+a", "+b", "-a", "-b")


def test_before_means_one_ends_before_the_other_starts() -> None:
    assert match_events({"before": [["a", "b"]]}, SERIAL) == []
    (mismatch,) = match_events({"before": [["a", "b"]]}, PARALLEL)
    assert mismatch.path == "events.before[0]"
    assert "tool_start(b)" in mismatch.message


def test_overlap_means_the_spans_intersect() -> None:
    assert match_events({"overlap": [["a", "b"]]}, PARALLEL) == []
    assert match_events({"overlap": [["b", "a"]]}, PARALLEL) == []
    assert len(match_events({"overlap": [["a", "b"]]}, SERIAL)) == 1


def test_a_missing_event_is_named() -> None:
    (mismatch,) = match_events({"before": [["a", "c"]]}, SERIAL)
    assert "no tool_start event for 'c'" in mismatch.message


def test_max_concurrent_counts_tools_between_start_and_end() -> None:
    assert match_events({"max_concurrent": 1}, SERIAL) == []
    (mismatch,) = match_events({"max_concurrent": 1}, PARALLEL)
    assert (mismatch.expected, mismatch.actual) == (1, 2)


def test_contains_not_contains_and_sequence_use_subset_patterns() -> None:
    stream: list[dict[str, Any]] = [
        *events("+a"),
        {"type": "hook", "event": "PreToolUse", "id": "a", "exit_code": 0},
        *events("-a"),
    ]
    assert match_events({"contains": [{"type": "hook", "exit_code": 0}]}, stream) == []
    assert len(match_events({"contains": [{"type": "permission_request"}]}, stream)) == 1
    assert match_events({"not_contains": [{"type": "permission_request"}]}, stream) == []
    assert len(match_events({"not_contains": [{"type": "hook"}]}, stream)) == 1
    in_order = [{"type": "tool_start"}, {"type": "hook"}, {"type": "tool_end"}]
    assert match_events({"sequence": in_order}, stream) == []
    (mismatch,) = match_events({"sequence": in_order[::-1]}, stream)
    assert mismatch.path == "events.sequence[1]"
