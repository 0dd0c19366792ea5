"""``python -m conformance.peers.claude_code [VERSION]``: Claude Code as a stdio adapter.

The same service as ``--impl claude-code:VERSION``, for runners that only
speak stdio: one JSON request per line in, one answer per line out
(PROTO-TRANSPORT-1). A turn the CLI does not finish in time, or a CLI that
dies, is answered ``kind: "internal"`` (PROTO-INTERNAL-1) and the adapter goes
on; the next ``begin`` starts a fresh conversation. EOF ends it (PROTO-EOF-1).
"""

from __future__ import annotations

import argparse
import json
import sys

from conformance.peers.claude_code.adapter import ClaudeCodeAdapter, played_profile
from conformance.peers.claude_code.connector import DEFAULT_TURN_TIMEOUT
from conformance.peers.claude_code.conversation import CliCrash, CliTimeout
from conformance.peers.claude_code.install import ClaudeCodeUnavailable, ensure_release


def main(argv: list[str] | None = None) -> int:
    """Serve protocol v1 on stdin/stdout until EOF."""
    parser = argparse.ArgumentParser(prog="python -m conformance.peers.claude_code")
    parser.add_argument("version", nargs="?", default="2.1.88", help="N.N.N or latest")
    parser.add_argument("--turn-timeout", type=float, default=DEFAULT_TURN_TIMEOUT)
    args = parser.parse_args(argv)
    try:
        release = ensure_release(args.version)
    except ClaudeCodeUnavailable as exc:
        print(f"claude-code: {exc}", file=sys.stderr)
        return 2
    adapter = ClaudeCodeAdapter(
        release,
        turn_timeout=args.turn_timeout,
        profile=played_profile(args.version, release.version),  # PROTO-HELLO-2
    )
    # PROTO-TRANSPORT-2: newline="\n", a line ends at LF only (newline="" still splits at a CR)
    with open(
        sys.stdin.fileno(), encoding="utf-8", errors="replace", newline="\n", closefd=False
    ) as stdin:
        for line in stdin:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError as exc:
                error = {"kind": "bad_request", "message": f"not JSON: {exc}"}
                answer: dict[str, object] = {"seq": None, "error": error}
            else:
                seq = request.get("seq") if isinstance(request, dict) else None
                if not isinstance(request, dict):
                    answer = {
                        "seq": None,
                        "error": {"kind": "bad_request", "message": "not an object"},
                    }
                else:
                    try:
                        answer = adapter.handle(request)
                    except (CliTimeout, CliCrash) as exc:
                        answer = {"seq": seq, "error": {"kind": "internal", "message": str(exc)}}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            sys.stderr.write(adapter.take_stderr())
    adapter.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
