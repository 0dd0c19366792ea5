"""``python -m conformance.claude_code [VERSION]``, kept where users call it.

Claude Code as a protocol v1 stdio adapter lives in ``conformance.peers.claude_code``;
this name runs the same command.
"""

from __future__ import annotations

import sys

from conformance.peers.claude_code.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
