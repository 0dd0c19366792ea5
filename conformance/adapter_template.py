#!/usr/bin/env python3
"""A minimal protocol v1 adapter: copy it, then route ``run_tool_use`` into your tool system.

Copy it as an executable and check it::

    cp conformance/adapter_template.py my-adapter && chmod +x my-adapter
    toolconf smoke --impl stdio:./my-adapter
    toolconf run --impl stdio:./my-adapter

(or run it in place: ``toolconf smoke --impl "stdio:python -m conformance.adapter_template"``).
It speaks the whole protocol (SPEC.md section 18): JSON lines on stdin and
stdout, one answer per request with its ``seq``, and a ``bad_request`` answer,
never an exit, for a request it cannot handle (PROTO-BAD-1). As shipped it
declares no feature, so the suite judges only the few scenarios every
implementation must pass (the protocol itself, an unknown tool) and the rest
are not applicable: it passes. Add a feature to ``FEATURES`` once your tools
do what its scenarios check (``toolconf list --feature NAME`` shows them), and
``toolconf run`` judges those.

The fields a black box cannot know (the pipeline stage, the error code and
name) are declared ``unreported`` in hello, so assertions on them are "not
observed", never failures: judge on behaviour first (``--levels behaviour``).
It needs only Python's standard library.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, Final

FEATURES: Final[list[str]] = []  # e.g. ["read", "write", "edit", "dedup"]
UNREPORTED: Final = ["stage", "error_code", "error_name"]


def begin(session: Mapping[str, Any]) -> None:
    """Open a session: ``root``, ``cwd``, ``env``, ``settings``, ``prompt`` (SPEC.md 18.2)."""


def tool_definitions() -> list[dict[str, Any]]:
    """Your tools as the Messages API takes them: name, description, input_schema."""
    return []


def run_tool_use(tool_use: Mapping[str, Any]) -> dict[str, Any]:
    """One ``tool_use`` block in, its ``tool_result`` block out. Replace this."""
    return {
        "type": "tool_result",
        "tool_use_id": tool_use["id"],
        "content": f"<tool_use_error>Error: No such tool available: {tool_use['name']}"
        "</tool_use_error>",
        "is_error": True,
    }


def end() -> None:
    """Close the session: stop background work, remove what it made."""


class BadRequest(Exception):
    """A request the adapter cannot handle: answered ``bad_request`` (PROTO-BAD-1)."""


def _stage(tool_use: Mapping[str, Any]) -> str:
    """Where the call ended (PROTO-EVENT-1): ``unknown_tool`` for a tool you do not have."""
    known = {tool["name"] for tool in tool_definitions()}
    return "done" if tool_use["name"] in known else "unknown_tool"


def _events(uses: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for use in uses:
        events.append({"type": "tool_start", "id": use["id"], "name": use["name"]})
        events.append({"type": "tool_end", "id": use["id"], "stage": _stage(use)})
    return events


def _tool_use(block: object) -> Mapping[str, Any]:
    """A ``tool_use`` block with a string ``id``, a string ``name`` and an ``input``."""
    if not isinstance(block, Mapping):
        raise BadRequest("a tool_use must be an object")
    if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
        raise BadRequest("a tool_use needs a string id and a string name")
    if "input" not in block:
        raise BadRequest("a tool_use needs an input")
    return block


class Adapter:
    """One adapter process: at most one session open at a time."""

    def __init__(self) -> None:
        self.in_session = False

    def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one request, without its ``seq``.

        Raises:
            BadRequest: an unknown command, a missing or mistyped field, no session.
        """
        cmd = request.get("cmd")
        if cmd == "hello":
            implementation = {"name": "my-agent", "version": "0", "language": "python"}
            return {
                "protocol": 1,
                "implementation": implementation,
                "features": FEATURES,
                "unreported": UNREPORTED,
            }
        if cmd == "begin":
            session = request.get("session")
            if not isinstance(session, Mapping):
                raise BadRequest("begin needs a session object")
            begin(session)
            self.in_session = True
            return {"ok": True}
        if cmd == "end":
            if self.in_session:
                end()
            self.in_session = False
            return {"ok": True}
        if cmd not in ("tools", "call", "message"):
            raise BadRequest(f"unknown command {cmd!r}")
        if not self.in_session:
            raise BadRequest(f"{cmd} needs an open session (begin first)")
        if cmd == "tools":
            return {"tools": tool_definitions(), "deferred": []}
        if cmd == "call":
            use = _tool_use(request.get("tool_use"))
            result = {"tool_result": run_tool_use(use), "outcome": {}}
            return {**result, "events": _events([use])}
        content = request.get("content")
        if not isinstance(content, list):
            raise BadRequest("message needs a content list")
        uses = [
            _tool_use(b)
            for b in content
            if not isinstance(b, Mapping) or b.get("type", "tool_use") == "tool_use"
        ]
        if len({use["id"] for use in uses}) < len(uses):
            raise BadRequest("a message repeats a tool_use id")
        return {
            "results": [{"tool_result": run_tool_use(use), "outcome": {}} for use in uses],
            "batches": [[use["id"]] for use in uses],  # one at a time: the simplest schedule
            "events": _events(uses),
        }

    def handle(self, line: str) -> dict[str, Any]:
        """One line in, one answer out: ``seq`` echoed when it is an integer, else null."""
        try:
            request = json.loads(line)
        except ValueError:
            return _bad(None, "not JSON")
        if not isinstance(request, Mapping):
            return _bad(None, "a request must be a JSON object")
        seq = request.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            return _bad(None, "a request needs an integer seq")
        try:
            return {"seq": seq, **self.answer(request)}
        except BadRequest as exc:
            return _bad(seq, str(exc))


def _bad(seq: int | None, message: str) -> dict[str, Any]:
    return {"seq": seq, "error": {"kind": "bad_request", "message": message}}


def main() -> int:
    """Serve requests from stdin until it closes."""
    adapter = Adapter()
    for line in sys.stdin:
        sys.stdout.write(json.dumps(adapter.handle(line)) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
