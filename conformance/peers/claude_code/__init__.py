"""Claude Code itself as an implementation under test (``--impl claude-code:VERSION``).

Claude Code runs through the ``agent:`` connector as two peer definitions
(``conformance/peers/agent/definitions/claude-code-*.yaml``);
``claude-code:VERSION`` is a name for them (``releases``, ``connector``).
What this package keeps are the pieces those definitions name, which only
Claude Code needs: its settings mapper (``settings_map``), the MCP servers it
is given for the emulated prompt and the test tools (``mcp_server``), and the
reader of its stream-json stdout (``transcript``). The CLI is a black box:
only its command line, the Messages API it calls and the MCP servers it is
given are used.
"""
