"""A minimal protocol v1 adapter: copy it, then route ``run_tool_use`` into your tool system.

Run as ``toolconf smoke --impl "stdio:python -m conformance.adapter_template"``.
It speaks the whole protocol (SPEC.md section 18): JSON lines on stdin and
stdout, one answer per request with its ``seq``. As shipped it declares no
feature, so every scenario is not applicable and the suite passes vacuously;
add a feature to ``FEATURES`` once your tools do what its scenarios check
(``toolconf list`` shows them), and ``toolconf run`` judges those.

The fields a black box cannot know (the pipeline stage, the error code and
name) are declared ``unreported`` in hello, so assertions on them are "not
observed", never failures: judge on behaviour first (``--levels behaviour``).
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


def _result(tool_use: Mapping[str, Any]) -> dict[str, Any]:
    return {"tool_result": run_tool_use(tool_use), "outcome": {}}


def _events(uses: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for use in uses:
        events.append({"type": "tool_start", "id": use["id"], "name": use["name"]})
        events.append({"type": "tool_end", "id": use["id"], "stage": "done"})
    return events


def handle(request: Mapping[str, Any]) -> dict[str, Any]:
    """One request, one answer (``seq`` echoed)."""
    seq, cmd = request.get("seq"), request.get("cmd")
    if cmd == "hello":
        implementation = {"name": "my-agent", "version": "0", "language": "python"}
        return {
            "seq": seq,
            "protocol": 1,
            "implementation": implementation,
            "features": FEATURES,
            "unreported": UNREPORTED,
        }
    if cmd == "begin":
        begin(request["session"])
        return {"seq": seq, "ok": True}
    if cmd == "end":
        end()
        return {"seq": seq, "ok": True}
    if cmd == "tools":
        return {"seq": seq, "tools": tool_definitions(), "deferred": []}
    if cmd == "call":
        use = request["tool_use"]
        return {"seq": seq, **_result(use), "events": _events([use])}
    if cmd == "message":
        uses = [b for b in request["content"] if b.get("type", "tool_use") == "tool_use"]
        return {
            "seq": seq,
            "results": [_result(use) for use in uses],
            "batches": [[use["id"]] for use in uses],  # one at a time: the simplest schedule
            "events": _events(uses),
        }
    return {"seq": seq, "error": {"kind": "bad_request", "message": f"unknown command {cmd!r}"}}


def main() -> int:
    """Serve requests from stdin until it closes."""
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            answer = {"seq": None, "error": {"kind": "bad_request", "message": "not JSON"}}
        else:
            answer = handle(request)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
