"""``python -m reference.adapter``: protocol v1 over stdin/stdout (SPEC.md section 18).

One JSON object per line in, one per line out, in order. Unparseable or unknown
requests get a ``bad_request`` answer and the adapter keeps serving; EOF on
stdin ends it with status 0.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from reference.engine import Engine


def _answer(engine: Engine, line: str) -> dict[str, Any]:
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"seq": None, "error": {"kind": "bad_request", "message": f"not JSON: {exc}"}}
    try:
        return engine.handle(request)
    except Exception as exc:  # the adapter never dies on one request
        seq = request.get("seq") if isinstance(request, dict) else None
        return {"seq": seq, "error": {"kind": "internal", "message": type(exc).__name__}}


def serve(stdin: TextIO, stdout: TextIO) -> int:
    engine = Engine()
    for line in stdin:
        if not line.strip():
            continue
        response = _answer(engine, line)
        # PROTO-TRANSPORT-1, PROTO-SEQ-1: one UTF-8 JSON line per request, in order
        stdout.write(json.dumps(response, ensure_ascii=False) + "\n")
        stdout.flush()
    engine.handle({"seq": 0, "cmd": "end"})  # PROTO-EOF-1: background tasks killed (BASH-BG-1)
    return 0


def main() -> int:
    with open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False) as stdin:
        return serve(stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
