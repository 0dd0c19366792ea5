"""An agent's adapter as a protocol v1 stdio adapter, for runners that only speak stdio.

One JSON request per line in, one answer per line out (PROTO-TRANSPORT-1),
until EOF (PROTO-EOF-1). A turn the agent does not finish in time, or an
agent that dies, is answered ``kind: "internal"`` (PROTO-INTERNAL-1) and the
adapter goes on: the next ``begin`` starts a fresh agent. The agent's stderr
goes to stderr after each answer.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from conformance.peers.agent.adapter import AgentAdapter
from conformance.peers.agent.session import AgentCrash, AgentTimeout

__all__ = ["serve_stdio"]


def serve_stdio(adapter: AgentAdapter) -> int:
    """Serve ``adapter`` on stdin and stdout until EOF; then close it. Returns 0."""
    # PROTO-TRANSPORT-2: newline="\n", a line ends at LF only (newline="" still splits at a CR)
    with open(
        sys.stdin.fileno(), encoding="utf-8", errors="replace", newline="\n", closefd=False
    ) as stdin:
        for line in stdin:
            if line.strip():
                sys.stdout.write(json.dumps(_answer(adapter, line)) + "\n")
                sys.stdout.flush()
                sys.stderr.write(adapter.take_stderr())
    adapter.close()
    return 0


def _answer(adapter: AgentAdapter, line: str) -> dict[str, Any]:
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"seq": None, "error": {"kind": "bad_request", "message": f"not JSON: {exc}"}}
    if not isinstance(request, dict):
        return {"seq": None, "error": {"kind": "bad_request", "message": "not an object"}}
    try:
        return adapter.handle(request)
    except (AgentTimeout, AgentCrash) as exc:
        return {"seq": request.get("seq"), "error": {"kind": "internal", "message": str(exc)}}
