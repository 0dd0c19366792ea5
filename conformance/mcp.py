"""``python -m conformance.mcp install|list``, kept where users call it.

The MCP peers live in ``conformance.peers.mcp``; this name runs the same command.
"""

from __future__ import annotations

import sys

from conformance.peers.mcp.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
