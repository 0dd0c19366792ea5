"""Claude Code itself as an implementation under test (``--impl claude-code:VERSION``).

The real CLI runs offline against a scripted Messages API on 127.0.0.1
(``messages_api``); each protocol v1 session is one CLI conversation
(``conversation``), served by ``adapter.ClaudeCodeAdapter``. The release is
installed by version into a cache directory (``install``), never vendored,
and treated as a black box: only its command line, the API it calls and the
MCP server it is given are used.
"""
