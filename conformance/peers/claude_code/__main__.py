"""``python -m conformance.peers.claude_code [VERSION]``: Claude Code as a stdio adapter.

The same service as ``--impl claude-code:VERSION`` (the agent definition
``releases.definition_for`` picks), for runners that only speak stdio
(``conformance.peers.agent.serve``). A release that cannot be installed or
run here is one line on stderr and exit status 3.
"""

from __future__ import annotations

import argparse
import sys

from conformance.peers.agent.adapter import AgentAdapter
from conformance.peers.agent.install import check_runnable, ensure_installed
from conformance.peers.agent.serve import serve_stdio
from conformance.peers.claude_code.releases import definition_for
from conformance.peers.npm import PeerUnavailable


def main(argv: list[str] | None = None) -> int:
    """Serve protocol v1 on stdin/stdout until EOF."""
    parser = argparse.ArgumentParser(prog="python -m conformance.peers.claude_code")
    parser.add_argument("version", nargs="?", default="2.1.88", help="N.N.N or latest")
    parser.add_argument(
        "--turn-timeout", type=float, default=0.0, help="seconds per turn (at least the release's)"
    )
    args = parser.parse_args(argv)
    try:
        definition = definition_for(args.version)
        agent = ensure_installed(definition)
        check_runnable(definition, isolate=None)
    except PeerUnavailable as exc:
        print(f"claude-code:{args.version}: {exc}", file=sys.stderr)
        return 3
    return serve_stdio(AgentAdapter(definition, agent, turn_timeout=args.turn_timeout))


if __name__ == "__main__":
    sys.exit(main())
