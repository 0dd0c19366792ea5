"""Layer 4, peers: every kind of implementation the suite can judge.

``registry`` names them by scheme (``connect("stdio:./adapter")``):
``direct`` (an engine in this process), ``stdio`` (an adapter process),
and the in-process peer adapters (``inprocess``) of Claude Code
(``claude_code``), MCP servers (``mcp``) and coding-agent CLIs (``agent``).
Around them: isolation of adapter processes (``isolation``), the npm cache
(``npm``) and what black-box peers show differently by design (``peer_rules``).
"""
