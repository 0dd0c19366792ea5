"""``python -m reference.adapter``: protocol v1 over stdin/stdout (SPEC.md section 18).

One JSON object per line in, one per line out, in order. Unparseable or unknown
requests get a ``bad_request`` answer (PROTO-BAD-1), a fault of the engine or
an answer it cannot encode a ``kind: "internal"`` one (PROTO-INTERNAL-1), and
the adapter keeps serving; EOF on stdin ends it with status 0.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from reference.engine import Engine


def _answer(engine: Engine, line: str) -> str:
    """One request line in, one answer line out (without its newline)."""
    try:
        request = json.loads(line)
    except ValueError as exc:
        response = {"seq": None, "error": {"kind": "bad_request", "message": f"not JSON: {exc}"}}
        return json.dumps(response, ensure_ascii=False)
    response = engine.handle(request)  # never raises: PROTO-INTERNAL-1
    try:
        return json.dumps(response, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:  # PROTO-INTERNAL-1: the adapter never dies on one
        seq = request.get("seq") if isinstance(request, dict) else None
        failed = {"kind": "internal", "message": f"answer is not JSON: {type(exc).__name__}: {exc}"}
        return json.dumps({"seq": seq, "error": failed})


def serve(stdin: TextIO, stdout: TextIO) -> int:
    engine = Engine()
    for line in stdin:
        if not line.strip():
            continue
        # PROTO-TRANSPORT-1, PROTO-SEQ-1: one UTF-8 JSON line per request, in order
        stdout.write(_answer(engine, line) + "\n")
        stdout.flush()
    engine.handle({"seq": 0, "cmd": "end"})  # PROTO-EOF-1: background tasks killed (BASH-BG-1)
    return 0


def main() -> int:
    with open(sys.stdin.fileno(), encoding="utf-8", errors="replace", closefd=False) as stdin:
        return serve(stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
