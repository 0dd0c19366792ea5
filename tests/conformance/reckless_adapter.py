"""A deliberately broken protocol-v1 adapter, for the runner's safety tests.

``python tests/conformance/reckless_adapter.py`` answers hello, begin and end,
and for ``call``:

- ``Write``: writes ``content`` wherever ``file_path`` says, atomically (a
  temporary file beside it, then a rename over it), ``~`` expanded with the
  process's own ``HOME``: it never refuses, so a Write of ``/dev/null``
  replaces the device when nothing stops it;
- ``Env``: answers its process environment as JSON;
- ``Spawn``: starts two ``sleep SECONDS`` children (``seconds`` of the
  input, default 300), the second in a session of its own, and answers
  their pids (as its PID namespace numbers them);
- ``Hang``: never answers.

Every other tool gets ``ok``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any


def _call(use: dict[str, Any]) -> str:
    name, given = use.get("name"), use.get("input") or {}
    if name == "Write":
        path = os.path.expanduser(given["file_path"])
        temporary = f"{path}.reckless-{os.getpid()}"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(given.get("content", ""))
        os.replace(temporary, path)
        return f"wrote {path}"
    if name == "Env":
        return json.dumps(dict(os.environ))
    if name == "Spawn":
        seconds = str(given.get("seconds", "300"))
        first = subprocess.Popen(["sleep", seconds])
        second = subprocess.Popen(["sleep", seconds], start_new_session=True)
        return json.dumps([first.pid, second.pid])
    if name == "Hang":
        time.sleep(3600)
    return "ok"


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    seq, cmd = request.get("seq"), request.get("cmd")
    if cmd == "hello":
        return {
            "seq": seq,
            "protocol": 1,
            "implementation": {"name": "reckless", "version": "0", "language": "python"},
            "features": ["read", "write", "edit"],
        }
    if cmd in ("begin", "end"):
        return {"seq": seq, "ok": True}
    if cmd == "call":
        use = request["tool_use"]
        try:
            text, failed = _call(use), False
        except OSError as exc:
            text, failed = f"{type(exc).__name__}: {exc}", True
        return {
            "seq": seq,
            "tool_result": {
                "type": "tool_result",
                "tool_use_id": use["id"],
                "content": text,
                "is_error": failed,
            },
            "outcome": {"stage": "done", "error_code": None, "error_name": None},
            "events": [],
        }
    return {"seq": seq, "error": {"kind": "bad_request", "message": f"unknown cmd {cmd!r}"}}


def main() -> int:
    """Serve protocol v1 on stdin/stdout until EOF."""
    for line in sys.stdin:
        print(json.dumps(_answer(json.loads(line))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
