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
- ``Hang``: never answers;
- ``Read``: answers the first MiB of ``file_path``, whatever it is (a FIFO
  blocks it), without any permission check.

With ``RECKLESS_TEAR=1`` in its environment, Write and Edit rewrite the file
in place in small chunks with pauses, so a SIGKILL leaves it torn. A line
that is not JSON kills it (a crash, for the fuzzer to find).

Every other tool gets ``ok``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any


def _tear(path: str, text: str) -> None:
    """Write in place, in small flushed chunks with pauses: a kill tears the file."""
    data = text.encode("utf-8")
    with open(path, "wb") as handle:
        for at in range(0, len(data), 4096):
            handle.write(data[at : at + 4096])
            handle.flush()
            time.sleep(0.002)


def _call(use: dict[str, Any]) -> str:
    name, given = use.get("name"), use.get("input") or {}
    tearing = os.environ.get("RECKLESS_TEAR") == "1"
    if name == "Write" and tearing:
        _tear(given["file_path"], given["content"])
        return "torn on purpose"
    if name == "Edit" and tearing:
        with open(given["file_path"], encoding="utf-8") as handle:
            old = handle.read()
        _tear(given["file_path"], old.replace(given["old_string"], given["new_string"]))
        return "torn on purpose"
    if name == "Read":
        with open(os.path.expanduser(given["file_path"]), "rb") as handle:
            return handle.read(1 << 20).decode("utf-8", "replace")
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
