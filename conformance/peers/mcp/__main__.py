"""``python -m conformance.peers.mcp``: list the shipped mappings, or install a mapping's peer.

``python -m conformance.peers.mcp install filesystem`` puts the pinned peer into the
cache (``$TOOLCONF_CACHE`` or ``~/.cache/toolconf``) ahead of a run; ``list``
names each shipped mapping with its implementation and features.
"""

from __future__ import annotations

import argparse
import sys

from conformance.errors import ConformanceError
from conformance.peers.mcp.install import ensure_peer
from conformance.peers.mcp.mapping import load_mapping, shipped_mappings


def main(argv: list[str] | None = None) -> int:
    """Run the command; 0 on success, 2 when a peer cannot be installed."""
    parser = argparse.ArgumentParser(prog="python -m conformance.peers.mcp")
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install", help="install the peers of these mappings")
    install.add_argument("mappings", nargs="+", metavar="MAPPING", help="a name or a YAML path")
    commands.add_parser("list", help="the shipped mappings")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            for name in shipped_mappings():
                mapping = load_mapping(name)
                what = " ".join(str(v) for v in mapping.implementation.values())
                print(f"{name}: {what}; features {', '.join(mapping.features)}")
            return 0
        for spec in args.mappings:
            values = ensure_peer(load_mapping(spec))
            found = values.get("package") or " ".join(values.get("claude") or ()) or "nothing"
            print(f"{spec}: {found}")
    except ConformanceError as exc:
        print(f"conformance.peers.mcp: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
