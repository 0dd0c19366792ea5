"""Protocol v1 (SPEC.md section 18), the side that serves it.

``protocol-v1.json`` is the protocol's JSON Schema, every request and answer;
``schema`` checks against it (``schemacheck`` compiles it for the hot path);
``server`` is the skeleton every protocol v1 server shares: the reference
engine, and each peer adapter of the conformance suite that serves a peer
(Claude Code, an MCP server, a coding agent) as protocol v1.
"""
