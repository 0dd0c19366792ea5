"""A scriptable fake implementation, for testing the runner itself.

``python -m conformance.peers.fake_adapter --mode MODE`` speaks protocol v1 on
stdio: hello, begin and end succeed; every tool call succeeds with the canned
result ``ok: <tool name>`` and a ``tool_start``/``tool_end`` event pair; a
message runs its calls one by one, one batch each. MODE breaks it on purpose:

- ``ok``: behaves (``tools`` answers one tool, Read);
- ``hang``: never answers a call;
- ``crash``: exits with status 3 on the first call;
- ``garbage``: answers a call with a line that is not JSON;
- ``split``: writes each answer in several flushed chunks of one line;
- ``wrong_seq``: answers a call with seq + 1;
- ``bad_protocol``: says protocol 2 in hello;
- ``stderr``: logs to stderr before answering;
- ``noisy_stderr``: logs as ``stderr`` does, in ANSI colours, with NUL and
  other control bytes XML cannot carry (what a report must survive).

``FakeEngine`` is the same fake in-process (``--impl
direct:conformance.peers.fake_adapter:FakeEngine``), always in mode ``ok``.
``ReticentEngine`` is a fake that, like Claude Code, cannot report ``stage``,
``error_code``, ``error_name`` or hook events (PROTO-UNREPORTED-1) and infers
``dedup`` from the text through a table (PROTO-INFER-1): its hello says so, and
the placeholders it sends in their place are wrong on purpose, so a runner
that read them would fail it.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["DEDUP_TABLE", "MODES", "FakeEngine", "ReticentEngine", "main"]

MODES: Final = (
    "ok",
    "hang",
    "crash",
    "garbage",
    "split",
    "wrong_seq",
    "bad_protocol",
    "stderr",
    "noisy_stderr",
)
DEFAULT_FEATURES: Final = ("read", "write", "edit", "test_tools")


class FakeEngine:
    """Answers protocol-v1 requests with canned successes."""

    def __init__(self, features: Sequence[str] = DEFAULT_FEATURES, protocol: int = 1) -> None:
        self.features = list(features)
        self.protocol = protocol

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request in, one response out (``seq`` echoed)."""
        seq = request.get("seq")
        cmd = request.get("cmd")
        if cmd == "hello":
            return {
                "seq": seq,
                "protocol": self.protocol,
                "implementation": {"name": "fake", "version": "0", "language": "python"},
                "features": self.features,
            }
        if cmd in ("begin", "end"):
            return {"seq": seq, "ok": True}
        if cmd == "tools":
            read = {
                "name": "Read",
                "description": "Read a file.",
                "input_schema": {"type": "object"},
            }
            return {"seq": seq, "tools": [read], "deferred": []}
        if cmd == "call":
            return {
                "seq": seq,
                **self._run(request["tool_use"]),
                "events": _events([request["tool_use"]]),
            }
        if cmd == "message":
            uses = request["content"]
            return {
                "seq": seq,
                "results": [self._run(use) for use in uses],
                "batches": [[use["id"]] for use in uses],
                "events": _events(uses),
            }
        return {"seq": seq, "error": {"kind": "bad_request", "message": f"unknown command {cmd!r}"}}

    @staticmethod
    def _run(tool_use: dict[str, Any]) -> dict[str, Any]:
        return {
            "tool_result": {
                "type": "tool_result",
                "tool_use_id": tool_use["id"],
                "content": f"ok: {tool_use['name']}",
                "is_error": False,
            },
            "outcome": {"stage": "done", "error_code": None, "error_name": None},
        }


DEDUP_TABLE: Final = {"File unchanged since last read": True}
"""``ReticentEngine``'s mapping from a result text's start to ``dedup``."""


class ReticentEngine(FakeEngine):
    """The fake, declaring fields it cannot report and one it infers from text."""

    UNREPORTED: Final = ("stage", "error_code", "error_name", "events.hook")

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """As the fake, with ``unreported`` and ``inferences`` in hello, placeholders after."""
        response = super().handle(request)
        if request.get("cmd") == "hello":
            response["unreported"] = list(self.UNREPORTED)
            response["inferences"] = [
                {
                    "field": "dedup",
                    "from": "the tool_result text",
                    "table": "conformance.peers.fake_adapter.DEDUP_TABLE",
                }
            ]
        for result in [response, *response.get("results", [])]:
            if "outcome" in result:
                text = str(result["tool_result"]["content"])
                dedup = any(text.startswith(k) and v for k, v in DEDUP_TABLE.items())
                result["outcome"] = {
                    "stage": "aborted",
                    "error_code": None,
                    "error_name": "NotReported",
                    "dedup": dedup,
                }
        return response


def _events(uses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for use in uses:
        events.append({"type": "tool_start", "id": use["id"], "name": use["name"]})
        events.append({"type": "tool_end", "id": use["id"], "stage": "done"})
    return events


def _write(text: str, *, split: bool) -> None:
    out = sys.stdout.buffer
    data = text.encode("utf-8") + b"\n"
    if not split:
        out.write(data)
        out.flush()
        return
    third = max(1, len(data) // 3)
    for start in range(0, len(data), third):
        out.write(data[start : start + third])
        out.flush()
        time.sleep(0.005)  # let the reader see the pieces separately


def main(argv: Sequence[str] | None = None) -> int:
    """Serve requests from stdin until EOF."""
    parser = argparse.ArgumentParser(prog="python -m conformance.peers.fake_adapter")
    parser.add_argument("--mode", choices=MODES, default="ok")
    parser.add_argument("--features", default=",".join(DEFAULT_FEATURES))
    args = parser.parse_args(argv)
    mode: str = args.mode
    engine = FakeEngine(
        [f for f in args.features.split(",") if f], protocol=2 if mode == "bad_protocol" else 1
    )
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            _write(
                json.dumps({"seq": None, "error": {"kind": "bad_request", "message": "bad JSON"}}),
                split=False,
            )
            continue
        is_call = request.get("cmd") in ("call", "message")
        if is_call and mode == "hang":
            threading.Event().wait()
        if is_call and mode == "crash":
            return 3
        if is_call and mode == "garbage":
            _write("this is not JSON", split=False)
            continue
        if mode == "stderr":
            print(f"fake: handling {request.get('cmd')}", file=sys.stderr, flush=True)
        if mode == "noisy_stderr":
            text = f"\x1b[31;1mfake:\x1b[0m handling\x00 {request.get('cmd')}\x07\x1b]0;t\x07\x0b"
            print(text, file=sys.stderr, flush=True)
        response = engine.handle(request)
        if is_call and mode == "wrong_seq":
            response["seq"] = request.get("seq", 0) + 1
        _write(json.dumps(response), split=mode == "split")
    return 0


if __name__ == "__main__":
    sys.exit(main())
