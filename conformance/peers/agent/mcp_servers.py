"""The MCP configuration file that gives an agent the MCP servers its definition names.

Each server is ``python -m MODULE ARGS`` run by the runner's own Python,
with the project on ``PYTHONPATH`` so the module is found from wherever the
agent starts it. The file has the ``mcpServers`` shape the agents that take
an MCP configuration read (Claude Code's ``--mcp-config``): one ``stdio``
entry per server, by name.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

__all__ = ["PROJECT", "mcp_config", "write_mcp_config"]

PROJECT: Final = Path(__file__).resolve().parents[3]
"""The directory holding the ``conformance`` package (what ``PYTHONPATH`` names)."""


def mcp_config(args: Mapping[str, Sequence[str]], modules: Mapping[str, str]) -> dict[str, Any]:
    """The configuration of the servers in ``args`` (name → expanded arguments)."""
    return {
        "mcpServers": {
            name: {
                "type": "stdio",
                "command": os.path.abspath(sys.executable),
                "args": ["-m", modules[name], *server_args],
                "env": {"PYTHONPATH": str(PROJECT)},
            }
            for name, server_args in args.items()
        }
    }


def write_mcp_config(
    path: Path, args: Mapping[str, Sequence[str]], modules: Mapping[str, str]
) -> None:
    """Write ``mcp_config(args, modules)`` to ``path``."""
    path.write_text(json.dumps(mcp_config(args, modules), indent=2), encoding="utf-8")
