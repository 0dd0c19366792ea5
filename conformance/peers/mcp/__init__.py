"""The ``mcp:`` connector: any MCP server's file tools judged through a mapping file.

``mapping`` loads and applies a peer's mapping, ``client`` runs the server
behind the official SDK's client, ``adapter`` serves protocol v1 from it,
``connector`` is what ``--impl mcp:NAME`` makes, and ``install`` puts a
pinned peer into the cache.
"""
