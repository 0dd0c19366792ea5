"""Checking a call or message answer against a step's ``expect``.

The fields a scenario can name, and what each one reads from the answer:

=============  ==========================================================
``is_error``   ``tool_result.is_error`` (absent counts as false)
``content``    the text of ``tool_result.content``: the string itself, or
               the text blocks joined with ``"\\n"``
``blocks``     ``tool_result.content`` as a list of blocks (a string
               becomes one text block)
``stage``      ``outcome.stage``
``error_code`` ``outcome.error_code`` (absent counts as null)
``error_name`` ``outcome.error_name`` (absent counts as null)
``dedup``      ``outcome.dedup`` (absent counts as false)
``output``     the structured output: the answer's ``output``, else
               ``outcome.output``
``outcome``    the whole ``outcome`` object
``tool_result`` the whole ``tool_result`` object
``events``     event-order checks (``matchers.match_events``)
=============  ==========================================================

Besides what ``expect`` names, every result must echo its tool_use id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conformance.matchers import MISSING, Mismatch, match, match_events

__all__ = ["FIELDS", "blocks_view", "check_call", "check_message", "check_tools", "text_view"]


def text_view(content: Any) -> Any:
    """The text the model reads: a string as is, text blocks joined with newlines."""
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return content


def blocks_view(content: Any) -> Any:
    """Content as a list of blocks; a plain string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


def _result(answer: Mapping[str, Any]) -> Mapping[str, Any]:
    result: Mapping[str, Any] = answer.get("tool_result", {})
    return result


def _outcome(answer: Mapping[str, Any]) -> Mapping[str, Any]:
    outcome: Mapping[str, Any] = answer.get("outcome", {})
    return outcome


FIELDS: Mapping[str, Callable[[Mapping[str, Any]], Any]] = {
    "is_error": lambda a: _result(a).get("is_error", False),
    "content": lambda a: text_view(_result(a).get("content", MISSING)),
    "blocks": lambda a: blocks_view(_result(a).get("content", MISSING)),
    "stage": lambda a: _outcome(a).get("stage", MISSING),
    "error_code": lambda a: _outcome(a).get("error_code"),
    "error_name": lambda a: _outcome(a).get("error_name"),
    "dedup": lambda a: _outcome(a).get("dedup", False),
    "output": lambda a: a.get("output", _outcome(a).get("output", MISSING)),
    "outcome": lambda a: a.get("outcome", MISSING),
    "tool_result": lambda a: a.get("tool_result", MISSING),
}
"""Expectation field -> how to read it from one result (``tool_result`` + ``outcome``)."""


def check_call(
    expect: Mapping[str, Any], answer: Mapping[str, Any], tool_use_id: str, prefix: str = ""
) -> list[Mismatch]:
    """Check one result against a call expectation (placeholders already expanded)."""
    out: list[Mismatch] = []
    echoed = _result(answer).get("tool_use_id", MISSING)
    if echoed != tool_use_id:
        out.append(Mismatch(f"{prefix}tool_result.tool_use_id", tool_use_id, echoed))
    for name, want in expect.items():
        if name == "events":
            out.extend(match_events(want, answer.get("events", []), f"{prefix}events"))
        else:
            out.extend(match(want, FIELDS[name](answer), f"{prefix}{name}"))
    return out


def check_tools(expect: Mapping[str, Any], answer: Mapping[str, Any]) -> list[Mismatch]:
    """Check a ``tools`` answer: the exported ``tools`` and the ``deferred`` names."""
    return [
        m
        for key in ("tools", "deferred")
        if key in expect
        for m in match(expect[key], answer[key], key)
    ]


def check_message(
    expect: Mapping[str, Any], answer: Mapping[str, Any], tool_use_ids: Sequence[str]
) -> list[Mismatch]:
    """Check a message answer: batch plan, each result in order, and events."""
    out: list[Mismatch] = []
    results: list[Mapping[str, Any]] = answer["results"]
    wanted: list[Any] = expect.get("results") or [None] * len(results)
    for i, (result, want, tool_use_id) in enumerate(
        zip(results, wanted, tool_use_ids, strict=True)
    ):
        out.extend(check_call(want or {}, result, tool_use_id, prefix=f"results[{i}]."))
    if "batches" in expect:
        out.extend(match(expect["batches"], answer.get("batches", MISSING), "batches"))
    if "events" in expect:
        out.extend(match_events(expect["events"], answer.get("events", []), "events"))
    return out
