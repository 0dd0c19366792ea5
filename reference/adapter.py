"""``python -m reference.adapter``: protocol v1 over stdin/stdout (SPEC.md section 18).

One JSON object per line in, one per line out, in order. Unparseable or unknown
requests get a ``bad_request`` answer (PROTO-BAD-1), a fault of the engine or
an answer it cannot encode a ``kind: "internal"`` one (PROTO-INTERNAL-1), and
the adapter keeps serving; EOF on stdin ends it with status 0.

Both streams are handled as bytes: a request ends at LF and nowhere else
(PROTO-TRANSPORT-2, so a CR is whitespace or a bad string, never a line
break), and an answer is encoded here, strictly, so it is always valid UTF-8
(PROTO-TRANSPORT-3).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, BinaryIO, Final

from reference.engine import Engine


def encode_answer(response: Any) -> bytes:
    """PROTO-TRANSPORT-3: one answer as a line of valid UTF-8 JSON, without its newline.

    A string holding a lone surrogate (a ``\\ud800`` escape the request sent,
    echoed back) cannot be UTF-8; such an answer is written with every
    non-ASCII character escaped, which keeps every string exactly and is
    plain ASCII. Raises ``TypeError``, ``ValueError`` or ``RecursionError``
    for a value that is not JSON at all.
    """
    text = json.dumps(response, ensure_ascii=False, allow_nan=False)
    try:
        return text.encode("utf-8")  # strict: never surrogateescape's raw bytes
    except UnicodeEncodeError:
        return json.dumps(response, ensure_ascii=True, allow_nan=False).encode("ascii")


_SEQ_AT_TOP: Final = re.compile(r"\s*:\s*(-?\d+)\s*[,}]")


def top_level_seq(line: str) -> int | None:
    """PROTO-BAD-1: the integer ``seq`` of a line's top-level object, found without parsing.

    For a line too deeply nested to parse: one linear pass that tracks string
    literals and bracket depth, and reads the value after a ``"seq"`` key at
    depth one. None when there is no such key or its value is not an integer.
    """
    depth = 0
    i, n = 0, len(line)
    while i < n:
        char = line[i]
        if char == '"':
            end = i + 1
            while end < n and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            if depth == 1 and line[i + 1 : end] == "seq":
                match = _SEQ_AT_TOP.match(line, end + 1)
                if match:
                    return int(match.group(1))
            i = end + 1
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        i += 1
    return None


def _answer(engine: Engine, line: str) -> bytes:
    """One request line in, one answer line out (without its newline)."""
    try:
        request = json.loads(line)
    except (ValueError, RecursionError) as exc:  # PROTO-BAD-1: nesting too deep is bad input
        message = f"not JSON: {type(exc).__name__}: {exc}"
        seq = top_level_seq(line) if isinstance(exc, RecursionError) else None
        response = {"seq": seq, "error": {"kind": "bad_request", "message": message}}
        return encode_answer(response)
    response = engine.handle(request)  # never raises: PROTO-INTERNAL-1
    try:
        return encode_answer(response)
    except (TypeError, ValueError, RecursionError) as exc:  # PROTO-INTERNAL-1: never dies on one
        seq = request.get("seq") if isinstance(request, dict) else None
        failed = {"kind": "internal", "message": f"answer is not JSON: {type(exc).__name__}: {exc}"}
        return encode_answer({"seq": seq if isinstance(seq, int) else None, "error": failed})


def serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer every LF-terminated line of ``stdin`` on ``stdout`` until EOF; the exit status."""
    engine = Engine()
    for raw in stdin:  # binary: split at b"\n" only (PROTO-TRANSPORT-2)
        line = raw.decode("utf-8", errors="replace")
        if not line.strip():
            continue
        # PROTO-TRANSPORT-1, PROTO-SEQ-1: one UTF-8 JSON line per request, in order
        stdout.write(_answer(engine, line) + b"\n")
        stdout.flush()
    engine.handle({"seq": 0, "cmd": "end"})  # PROTO-EOF-1: background tasks killed (BASH-BG-1)
    return 0


def main() -> int:
    with open(sys.stdin.fileno(), "rb", closefd=False) as stdin:
        return serve(stdin, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())
