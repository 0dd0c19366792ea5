"""An MCP server behind protocol v1, through its mapping file.

``McpAdapter.handle`` answers protocol v1 requests (SPEC.md section 18) for
one peer: ``hello`` from the mapping (its features, what it leaves
unreported, what is inferred and through which table); ``begin`` starts one
server process in the session's cwd with the session's environment
(PROTO-MCP-SESSION-1, one process per session); ``call`` maps the tool_use
to the server tool and its input (``mapping.map_input``) and the result
back; ``end`` stops the process. ``message`` (the scheduler) and ``tools``
(the pool rules) have no MCP counterpart a peer can show, so they are
``unsupported``, as is any setup or input the mapping cannot carry: such a
scenario is not applicable, never failed (PROTO-MCP-APPLICABLE-1). So is a
call naming the session directory's own files when the peer is not given the
session directory, or a counted task id when the peer names its tasks at
random (``conformance.peers.peer_rules``, the rules the claude-code: connector
applies too).

A result is read back as the mapping says, and only so: the MCP content
blocks are the tool_result content (a lone text block as a string, images
and PDF blobs as their blocks), ``isError`` is ``is_error``, a JSON-RPC
error answer to ``tools/call`` is an error result holding its message. The
outcome and events come from the result's ``_meta`` when the mapping names
the keys the peer reports them under, else they are unreported; ``output``
is the parsed text when the mapping says the peer answers with its
structured output as JSON, and ``dedup`` is inferred only through the
mapping's ``dedup_output_type`` (named in the hello, PROTO-INFER-1).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from mcp import MCPError

from conformance.peers.mcp.client import ServerCrash, ServerProcess, ServerTimeout
from conformance.peers.mcp.mapping import McpMapping, expand, map_input
from conformance.peers.peer_rules import Unmappable, counted_task_id, names_own_files
from reference.protocol.schema import PROTOCOL
from reference.protocol.server import Handler, ProtocolServer
from reference.settings import SOURCES
from reference.version import __version__

__all__ = ["McpAdapter", "to_protocol_content"]

_SOURCE_KEYS: Final = frozenset({"permissions"})
SETTINGS_SOURCES: Final = SOURCES
"""The source names of protocol v1's ``begin``; others are ignored (PROTO-BEGIN-1)."""


class McpAdapter(ProtocolServer):
    """One peer serving protocol v1, one server process per session.

    ``placeholders`` are the install's (``package``, ``claude``); a call
    past ``call_timeout`` raises ``ServerTimeout`` and leaves no session
    (the connector restarts the adapter).
    """

    PASS_THROUGH = (ServerTimeout, ServerCrash)

    def __init__(
        self,
        mapping: McpMapping,
        placeholders: Mapping[str, str | tuple[str, ...]],
        *,
        call_timeout: float,
    ) -> None:
        self.mapping = mapping
        self.placeholders = dict(placeholders)
        self.call_timeout = call_timeout
        self._server: ServerProcess | None = None
        self._work: Path | None = None
        self._session_dir: str | None = None
        self._stderr_at = 0

    # -- protocol -----------------------------------------------------------

    def commands(self) -> Mapping[str, Handler]:
        return {
            "hello": self._hello,
            "begin": self._begin,
            "call": self._call,
            "message": self._no_counterpart,
            "tools": self._no_counterpart,
            "end": self._end,
        }

    def in_session(self) -> bool:
        return self._server is not None

    def close(self) -> None:
        """Stop any server and remove the adapter's own files."""
        self._stop_server()

    def take_stderr(self) -> str:
        """The server's stderr since the last call."""
        if self._work is None:
            return ""
        log = self._work / "stderr.log"
        try:
            with log.open("r", encoding="utf-8", errors="replace") as handle:
                handle.seek(self._stderr_at)
                text = handle.read()
                self._stderr_at = handle.tell()
        except OSError:
            return ""
        return text

    # -- commands -----------------------------------------------------------

    def _no_counterpart(self, request: Mapping[str, Any]) -> dict[str, Any]:
        # PROTO-MCP-APPLICABLE-1: MCP has no assistant message and no pool rules to show
        shown = "scheduler" if request["cmd"] == "message" else "pool rules"
        raise Unmappable(f"an MCP peer shows no {shown}")

    def _values(self, session: Mapping[str, Any] | None = None) -> dict[str, str]:
        values = {
            k: v for k, v in self.placeholders.items() if isinstance(v, str) and k != "claude"
        }
        values |= {"python": sys.executable, "toolconf_version": __version__}
        if session is not None and self._work is not None:
            values |= {
                "root": str(session["root"]),
                "cwd": str(session.get("cwd") or session["root"]),
                "home": str(
                    session.get("home")
                    or (session.get("env") or {}).get("HOME")
                    or self._work / "home"
                ),
                "work": str(self._work),
                "session_dir": str(session.get("session_dir") or self._work / "session"),
                "prompt": str(session.get("prompt") or "deny"),
            }
        return values

    def _hello(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        values = self._values()
        implementation = {k: expand(str(v), values) for k, v in self.mapping.implementation.items()}
        answer: dict[str, Any] = {
            "protocol": PROTOCOL,
            "implementation": implementation,
            "features": list(self.mapping.features),
        }
        if self.mapping.unreported:
            answer["unreported"] = list(self.mapping.unreported)
        if self.mapping.inferences:
            answer["inferences"] = [dict(i) for i in self.mapping.inferences]
        return answer

    def _begin(self, request: Mapping[str, Any]) -> dict[str, Any]:
        session: Mapping[str, Any] = request["session"]
        self._stop_server()
        given = session.get("settings") or {}
        settings = {k: v for k, v in given.items() if k in SETTINGS_SOURCES}
        self._check_settings(settings)
        if session.get("test_tools") and "test_tools" not in self.mapping.session_args:
            raise Unmappable(f"{self.mapping.name} registers no test tools")
        self._work = Path(tempfile.mkdtemp(prefix="toolconf-mcp-"))
        self._stderr_at = 0
        given_dir = session.get("session_dir")
        self._session_dir = str(given_dir) if given_dir else None
        values = self._values(session)
        Path(values["home"]).mkdir(parents=True, exist_ok=True)
        argv = self._argv(values)
        argv += self._session_argv(session, settings, values)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TMPDIR": str(self._work),
            **{str(k): str(v) for k, v in (session.get("env") or {}).items()},
            "HOME": values["home"],
            **{k: expand(v, values) for k, v in self.mapping.env.items()},
        }
        for key in ("CLAUDE_CONFIG_DIR",):
            if key in env:
                Path(env[key]).mkdir(parents=True, exist_ok=True)
        try:
            self._server = ServerProcess(
                argv,
                cwd=values["cwd"],
                env=env,
                stderr=self._work / "stderr.log",
                start_timeout=self.mapping.start_timeout,
                mode=self.mapping.mode,
                validate_output=self.mapping.results.validate_output,
                transport=self.mapping.transport,
            )
        except (ServerCrash, ServerTimeout):
            self._stop_server(keep_log=True)
            raise
        return {"ok": True}

    def _check_settings(self, settings: Mapping[str, Any]) -> None:
        """PROTO-MCP-APPLICABLE-1: settings the peer cannot be given make begin unsupported.

        ``files`` peers take every source; ``allow_only`` peers have no
        permission layer, so they allow every call: allow rules change
        nothing there, and anything else (deny, ask, a mode, hooks) cannot be
        given.
        """
        given = {name: value for name, value in settings.items() if value}
        if not given or self.mapping.settings == "files":
            return
        if self.mapping.settings == "allow_only":
            for name, value in given.items():
                permissions = value.get("permissions") if isinstance(value, Mapping) else None
                others = set(value) - _SOURCE_KEYS if isinstance(value, Mapping) else {"?"}
                extra: set[str] = set()  # no permissions key: only its other keys count
                if isinstance(permissions, Mapping):
                    extra = set(permissions) - {"allow"}
                elif permissions is not None:
                    extra = {"permissions"}
                if others or extra:
                    raise Unmappable(
                        f"{self.mapping.name} has no permission layer or hooks: {name} "
                        f"settings {sorted(others | extra)} cannot be given"
                    )
            return
        raise Unmappable(f"{self.mapping.name} takes no settings ({', '.join(sorted(given))})")

    def _argv(self, values: Mapping[str, str]) -> list[str]:
        argv: list[str] = []
        for item in self.mapping.command:
            claude = self.placeholders.get("claude")
            if item == "{claude}" and isinstance(claude, tuple):
                argv += list(claude)
            else:
                argv.append(expand(item, values))
        return argv

    def _session_argv(
        self, session: Mapping[str, Any], settings: Mapping[str, Any], values: Mapping[str, str]
    ) -> list[str]:
        argv: list[str] = []
        if self.mapping.settings == "files" and self._work is not None:
            for name, value in settings.items():
                file = self._work / f"settings-{name}.json"
                file.write_text(json.dumps(value), encoding="utf-8")
                argv += ["--settings-source", f"{name}={file}"]
        args = self.mapping.session_args
        if "prompt" in args:
            argv += [expand(a, values) for a in args["prompt"]]
        if "session_dir" in args and session.get("session_dir"):
            argv += [expand(a, values) for a in args["session_dir"]]
        if "test_tools" in args and session.get("test_tools"):
            argv += [expand(a, values) for a in args["test_tools"]]
        return argv

    def _call(self, request: Mapping[str, Any]) -> dict[str, Any]:
        tool_use = request["tool_use"]
        name, tool_use_id = str(tool_use["name"]), str(tool_use["id"])
        self._check_addressable(name, tool_use["input"])
        tool_map = self.mapping.tool_for(name)
        arguments = map_input(name, tool_map, tool_use["input"])
        rules = self.mapping.results
        meta = {rules.tool_use_id_meta: tool_use_id} if rules.tool_use_id_meta else None
        server = self._server
        assert server is not None
        try:
            result = server.call_tool(
                tool_map.tool, arguments, timeout=self.call_timeout, meta=meta
            )
        except MCPError as exc:  # a JSON-RPC error answer: what an MCP host shows as an error
            message = f"MCP error {exc.code}: {exc.error.message}"
            block = {"type": "tool_result", "tool_use_id": tool_use_id}
            return {
                "tool_result": {**block, "content": message, "is_error": True},
                "outcome": {},
                "events": [],
            }
        except (ServerTimeout, ServerCrash):
            self._stop_server(keep_log=True)
            raise
        return self._read_back(result, tool_use_id)

    def _check_addressable(self, name: str, tool_input: object) -> None:
        """PROTO-MCP-APPLICABLE-1: refuse a call naming what the peer keeps or names otherwise.

        A peer not given the session directory (no ``session_dir`` argv in
        its mapping) keeps its file history, persisted results and task
        output elsewhere, if at all; a peer whose mapping says ``task_ids:
        random`` has no task called ``bash_1``.

        Raises:
            Unmappable: the call addresses one of these.
        """
        session_dir = self._session_dir
        given = "session_dir" in self.mapping.session_args
        if session_dir is not None and not given and names_own_files(tool_input, session_dir):
            raise Unmappable(
                f"{self.mapping.name} is given no session directory: the call names its "
                "file history, persisted results or task output, which the peer keeps elsewhere"
            )
        task_id = counted_task_id(name, tool_input)
        if task_id is not None and self.mapping.task_ids == "random":
            raise Unmappable(
                f"{name} names the counted task id {task_id!r} (BASH-BG-1); "
                f"{self.mapping.name} names background tasks at random"
            )

    def _read_back(self, result: Mapping[str, Any], tool_use_id: str) -> dict[str, Any]:
        rules = self.mapping.results
        content = to_protocol_content(result.get("content") or [])
        tool_result = {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
            "is_error": bool(result.get("isError")),
        }
        meta = result.get("_meta") or {}
        outcome: dict[str, Any] = {}
        if rules.outcome_meta and isinstance(meta.get(rules.outcome_meta), Mapping):
            outcome = dict(meta[rules.outcome_meta])
        if rules.output == "json_text" and isinstance(content, str):
            try:
                parsed = json.loads(content)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                outcome["output"] = parsed
                if rules.dedup_output_type is not None:  # PROTO-INFER-1, named in hello
                    outcome["dedup"] = parsed.get("type") == rules.dedup_output_type
        events: list[Any] = []
        if rules.events_meta and isinstance(meta.get(rules.events_meta), list):
            events = list(meta[rules.events_meta])
        return {"tool_result": tool_result, "outcome": outcome, "events": events}

    def _end(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        self._stop_server()
        return {"ok": True}

    def _stop_server(self, *, keep_log: bool = False) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        if self._work is not None and not keep_log:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None


def to_protocol_content(blocks: list[Any]) -> str | list[dict[str, Any]]:
    """MCP content blocks as a tool_result's content (the read-back rule of the module).

    A lone text block is the string, no block an empty list; otherwise text blocks stay
    text, image blocks become base64 image blocks, an embedded blob resource
    of ``application/pdf`` a document block and an embedded text resource a
    text block.

    Raises:
        Unmappable: a block no tool_result can hold (audio, a resource link, another blob).
    """
    if not blocks:
        return []  # the inverse of the server's mapping: an empty list stays one
    if len(blocks) == 1 and blocks[0].get("type") == "text":
        return str(blocks[0].get("text", ""))
    out: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        resource = block.get("resource") or {}
        if kind == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image":
            source = {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}
            out.append({"type": "image", "source": source})
        elif kind == "resource" and "text" in resource:
            out.append({"type": "text", "text": str(resource["text"])})
        elif kind == "resource" and resource.get("mimeType") == "application/pdf":
            source = {"type": "base64", "media_type": "application/pdf", "data": resource["blob"]}
            out.append({"type": "document", "source": source})
        else:
            raise Unmappable(f"an MCP {kind} block has no tool_result counterpart")
    return out
