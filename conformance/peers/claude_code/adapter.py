"""Claude Code behind protocol v1: each request served by driving the real CLI.

``ClaudeCodeAdapter.handle`` answers protocol v1 requests (SPEC.md section
18) as an adapter would, so the runner judges Claude Code like any other
implementation: ``begin`` starts a conversation (``Conversation``) in the
session's cwd with the session's settings mapped (``settings_map``), env and
emulated prompt; ``call`` is one assistant turn with one tool_use block;
``message`` is one turn with all its blocks, so Claude Code's own scheduler
makes the batches; ``tools`` shows what the CLI offered the model; ``end``
ends the conversation.

Claude Code reports what the model sees (the tool_result), its structured
result (stream-json's ``tool_use_result``) and, through the emulated
prompt, every permission question. It reports no pipeline stage, no
validateInput code and no error name, no batch plan and no tool or hook
events: ``hello`` lists those as ``unreported``, and assertions on them are
not observed. The one field inferred from message text, ``dedup``, is
inferred through ``inference.DEDUP_STUB_PREFIXES``; ``hello`` names it.

The CLI is a black box here: it is driven only through its command line,
the Messages API it calls and the MCP server it is given.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from conformance.peers.claude_code import inference
from conformance.peers.claude_code.conversation import (
    CliCrash,
    CliTimeout,
    Conversation,
    ConversationEnded,
    TurnResult,
)
from conformance.peers.claude_code.install import Release
from conformance.peers.claude_code.mcp_server import PROBE_TOOLS
from conformance.peers.claude_code.settings_map import plan
from conformance.peers.peer_rules import Unmappable, counted_task_id, names_own_files
from reference.errors import BadRequest
from reference.protocol.schema import PROTOCOL
from reference.protocol.server import Handler, ProtocolServer

__all__ = ["ABSENT_FEATURES", "FEATURES", "UNREPORTED", "ClaudeCodeAdapter", "release_features"]

FEATURES: Final = (
    "read",
    "write",
    "edit",
    "dedup",
    "token_gate",
    "images",
    "pdf",
    "notebooks",
    "notebook_edit",
    "glob",
    "grep",
    "bash",
    "permissions",
    "hooks",
    "scheduler",
    "streaming",
    "result_persistence",
    "registry",
    "profiles",
)
"""Protocol v1 features the CLI has (PROTO-FEATURES-1); ``test_tools`` is the connector's MCP."""

ABSENT_FEATURES: Final = {"2.1.332": frozenset({"glob", "grep"})}
"""PROTO-FEATURES-1: the features a measured release lacks (2.1.332 offers no Glob and
no Grep tool), so their scenarios are not applicable there."""


def release_features(version: str) -> list[str]:
    """The features ``hello`` claims for ``version``: FEATURES less what it was measured to lack."""
    absent = ABSENT_FEATURES.get(version, frozenset())
    return [feature for feature in FEATURES if feature not in absent]


UNREPORTED: Final = (
    "stage",
    "error_code",
    "error_name",
    "batches",
    "events.block",
    "events.tool_start",
    "events.tool_end",
    "events.hook",
    "events.progress",
    "events.file_changed",
    "events.permission_request.reason",
    "outcome.permission",
    "outcome.persisted_path",
    "outcome.prevent_continuation",
    "outcome.stop_reason",
)
"""Outcome fields Claude Code does not show through its public interfaces."""

_START_TIMEOUT: Final = 90.0
_CARRIED_BLOCKS: Final = frozenset({"text", "image", "document"})
"""The tool_result content blocks protocol v1 carries (its schema, reference/protocol)."""
_SAFE_BUILT_INS: Final = frozenset({"Read", "Glob", "Grep"})


PROFILES_BY_VERSION: Final = {"2.1.88": "claude-code-2.1.88", "2.1.332": "claude-code-latest"}
"""PROTO-HELLO-2: the profile (SPEC.md PROFILE-SET-1) each measured release plays."""


def played_profile(requested: str, version: str) -> str | None:
    """The profile a release plays: ``latest`` plays ``claude-code-latest`` whatever its
    number (the profile is the newest release measured), a pinned release the profile
    measured on it, if any; None when no profile models the release."""
    if requested == "latest":
        return "claude-code-latest"
    return PROFILES_BY_VERSION.get(version)


class ClaudeCodeAdapter(ProtocolServer):
    """One Claude Code release serving protocol v1, one conversation per session.

    ``turn_timeout`` bounds each call or message; past it the CLI is killed
    and ``CliTimeout`` escapes ``handle`` (the connector reports a timeout).
    """

    PASS_THROUGH = (CliTimeout, CliCrash)

    def __init__(
        self, release: Release, *, turn_timeout: float, profile: str | None = None
    ) -> None:
        self.release = release
        self.turn_timeout = turn_timeout
        self.profile = profile
        """PROTO-HELLO-2: the profile this release plays, if one models it."""
        self._conversation: Conversation | None = None
        self._work: Path | None = None
        self._last_stderr = ""
        self._test_tools = False
        self._session_dir: str | None = None
        self._probes_done = 0  # Probe calls answered in this session

    # -- protocol -----------------------------------------------------------

    def commands(self) -> Mapping[str, Handler]:
        return {
            "hello": self._hello,
            "begin": self._begin,
            "call": self._call,
            "message": self._message,
            "tools": self._tools,
            "end": self._end,
        }

    def in_session(self) -> bool:
        return self._conversation is not None

    def close(self) -> None:
        """End any conversation and remove the connector's own files."""
        self._close_conversation()

    def take_stderr(self) -> str:
        """The CLI's stderr since the last call."""
        text, self._last_stderr = self._last_stderr, ""
        return text + (self._conversation.take_stderr() if self._conversation else "")

    # -- commands -----------------------------------------------------------

    def _hello(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        runtime = "node" if self.release.argv[0].endswith("node") else "native"
        return {
            "protocol": PROTOCOL,
            "implementation": {
                "name": "claude-code",
                "version": self.release.version,
                "language": "javascript" if runtime == "node" else "native",
            },
            "features": [*release_features(self.release.version), "test_tools"],
            "profiles": [self.profile] if self.profile else [],  # PROTO-HELLO-2
            "unreported": list(UNREPORTED),
            "inferences": [
                {
                    "field": "dedup",
                    "from": "tool_result text",
                    "table": "conformance/peers/claude_code/inference.py: DEDUP_STUB_PREFIXES",
                }
            ],
        }

    def _begin(self, request: Mapping[str, Any]) -> dict[str, Any]:
        session: Mapping[str, Any] = request["session"]
        wanted = session.get("profile")
        if wanted is not None and wanted != self.profile:  # PROTO-BEGIN-3
            raise Unmappable(
                f"Claude Code {self.release.version} plays {self.profile}, not {wanted}"
            )
        root_given = str(session["root"])
        cwd_given = str(session.get("cwd") or root_given)
        settings_given = session.get("settings") or {}
        if Path(cwd_given) != Path(root_given) and _hooks_read_project_dir(settings_given):
            # PROTO-UNSUPPORTED-1: the CLI's project directory is where it starts,
            # so hooks would see CLAUDE_PROJECT_DIR = cwd; root != cwd has no counterpart
            raise Unmappable(
                "a hook reading CLAUDE_PROJECT_DIR in a session whose cwd is not its "
                "root: the CLI's project directory is the directory it starts in"
            )
        self._close_conversation()
        self._test_tools = bool(session.get("test_tools"))
        self._session_dir = str(session["session_dir"]) if session.get("session_dir") else None
        self._probes_done = 0
        root = str(session["root"])
        cwd = str(session.get("cwd") or root)
        env = {str(k): str(v) for k, v in (session.get("env") or {}).items()}
        self._work = Path(tempfile.mkdtemp(prefix="toolconf-cc-"))
        config = self._work / "config"
        config.mkdir()
        # PERM-SOURCE-1: the session's project is a trusted one, as a user's is once the
        # trust dialog was accepted (a release that asks ignores a projectSettings allow
        # rule of an untrusted project)
        trusted = {"hasTrustDialogAccepted": True}
        projects = {"projects": {root: trusted, cwd: trusted}}
        (config / ".claude.json").write_text(json.dumps(projects), encoding="utf-8")
        # without one, a home of the connector's own, removed with the session
        home = str(session.get("home") or env.get("HOME") or "")
        if not home:
            home = str(self._work / "home")
            Path(home).mkdir()
        cli = plan(
            session.get("settings") or {},
            root=root,
            cwd=cwd,
            config=str(config),
            flag_file=self._work / "flag-settings.json",
        )
        for path, value in cli.files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value, indent=2), encoding="utf-8")
        process_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "SHELL": shutil.which("bash") or "/bin/bash",
            "PWD": cwd,
            "TMPDIR": str(self._work),
            **env,
            "HOME": home,
            "CLAUDE_CONFIG_DIR": str(config),
            # what the CLI and the tools it spawns write of their own stays out of the sandbox
            "NPM_CONFIG_CACHE": str(self._work / "npm"),
            "XDG_CACHE_HOME": str(self._work / "cache"),
            "XDG_STATE_HOME": str(self._work / "state"),
        }
        self._conversation = Conversation(
            self.release,
            cwd=cwd,
            env=process_env,
            # PERM-DIRS-1: root is a working directory; the CLI's own is where it starts (cwd)
            flags=[*cli.flags, *(["--add-dir", root] if Path(cwd) != Path(root) else [])],
            work=self._work,
            prompt_answer=str(session.get("prompt") or "deny"),
            test_tools=bool(session.get("test_tools")),
            start_timeout=_START_TIMEOUT,
        ).start()
        return {"ok": True}

    def _call(self, request: Mapping[str, Any]) -> dict[str, Any]:
        tool_use = dict(request["tool_use"])
        self._check_faithful([tool_use])
        turn = self._turn([self._to_cli(tool_use)], 0.0)
        self._count_probes([tool_use], turn)
        return _result(turn, tool_use)

    def _message(self, request: Mapping[str, Any]) -> dict[str, Any]:
        content = [dict(b) for b in request["content"]]
        uses = [b for b in content if _is_tool_use(b)]  # DISP-EXTRACT-1: only these get results
        if len({b.get("id") for b in uses}) != len(uses):
            raise BadRequest("message repeats a tool_use id")  # PROTO-BAD-1
        if "interrupt" in request:
            raise Unmappable("interrupting a running turn is not scripted for Claude Code")
        self._check_faithful(uses)
        delay = float(request.get("block_delay_ms") or 0) / 1000.0
        # the model's text goes with its tool_use blocks; thinking needs a real signature
        blocks = [
            self._to_cli(b) if _is_tool_use(b) else b
            for b in content
            if b.get("type") != "thinking"
        ]
        turn = self._turn(blocks, delay if request.get("streaming") else 0.0)
        self._count_probes(uses, turn)
        results = [_result(turn, use) for use in uses]
        events = [event for result in results for event in result.pop("events")]
        return {"results": results, "events": events}

    def _tools(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        assert self._conversation is not None
        exported = [
            {k: tool[k] for k in ("name", "description", "input_schema") if k in tool}
            for tool in self._conversation.tools
        ]
        return {"tools": exported, "deferred": []}

    def _end(self, _request: Mapping[str, Any]) -> dict[str, Any]:
        self._close_conversation()
        return {"ok": True}

    # -- helpers ------------------------------------------------------------

    def _check_faithful(self, uses: list[dict[str, Any]]) -> None:
        """PROTO-UNSUPPORTED-1: refuse blocks the CLI cannot be given faithfully.

        Each rule names something Claude Code shows differently by design, never
        a behaviour it lacks:

        - a task tool naming a counted id (``bash_1``, BASH-BG-1): the CLI names
          background tasks with random ids (``b2h1c0rk9``), so no counted id
          addresses one of its tasks;
        - a path in the session directory's ``file-history``, ``tool-results``
          or ``tasks``: the CLI keeps those in its own config directory;
        - ToolSearch in a session with test tools when the CLI offers none: it
          defers no tool of this pool (the scenario's deferral has no
          counterpart);
        - a Probe whose trail would not be empty (an earlier Probe's context
          modifier applies to it, PROTO-PROBE-3): the connector's Probe is an
          MCP tool, and MCP tools have no context modifiers.
        """
        for use in uses:
            name = str(use.get("name"))
            tool_input = use.get("input") if isinstance(use.get("input"), dict) else {}
            task_id = counted_task_id(name, tool_input)
            if task_id is not None:
                raise Unmappable(
                    f"{name} names the counted task id {task_id!r} (BASH-BG-1); Claude Code "
                    "names background tasks with random ids"
                )
            if self._session_dir is not None and names_own_files(tool_input, self._session_dir):
                raise Unmappable(
                    "the call reads the session directory's file history, persisted results "
                    "or task output; Claude Code keeps those in its own config directory"
                )
            if name == "ToolSearch" and self._test_tools and not self._offers("ToolSearch"):
                raise Unmappable(
                    "Claude Code offers no ToolSearch here: it defers none of these tools"
                )
        if self._test_tools and _sees_probe_trail(uses, earlier=self._probes_done):
            raise Unmappable(
                "a Probe here would see an earlier Probe's context modifier (PROTO-PROBE-3); the "
                "connector's Probe is an MCP tool, which has none"
            )

    def _count_probes(self, uses: list[dict[str, Any]], turn: TurnResult) -> None:
        """Count the Probes that succeeded: their modifiers join the session's context."""
        for use in uses:
            block = turn.results.get(str(use.get("id")))
            if use.get("name") == "Probe" and block is not None and not block.get("is_error"):
                self._probes_done += 1

    def _offers(self, tool: str) -> bool:
        conversation = self._conversation
        return conversation is not None and any(t.get("name") == tool for t in conversation.tools)

    def _to_cli(self, use: Mapping[str, Any]) -> dict[str, Any]:
        """The block as sent to the CLI: Probe goes to the MCP tool of its concurrency safety.

        Without test tools a Probe goes as it is, to be the CLI's unknown tool.
        """
        block = dict(use)
        if block.get("name") == "Probe" and self._test_tools:
            tool_input = block.get("input")
            if isinstance(tool_input, dict) and tool_input.get("bash_error") is True:
                raise Unmappable(
                    "Probe's bash_error has no counterpart: a failed MCP tool is no Bash"
                )
            safe = isinstance(tool_input, dict) and tool_input.get("concurrency_safe") is True
            block["name"] = PROBE_TOOLS[1] if safe else PROBE_TOOLS[0]
        return block

    def _turn(self, uses: list[dict[str, Any]], block_delay: float) -> TurnResult:
        conversation = self._conversation
        assert conversation is not None
        try:
            return conversation.take_turn(uses, timeout=self.turn_timeout, block_delay=block_delay)
        except ConversationEnded as exc:  # PROTO-UNSUPPORTED-1: no later turn can be scripted
            raise Unmappable(f"{exc}; later calls of the session cannot be sent") from exc
        except (CliTimeout, CliCrash):
            self._conversation = None
            self._last_stderr += conversation.take_stderr()
            raise

    def _close_conversation(self) -> None:
        conversation, self._conversation = self._conversation, None
        if conversation is not None:
            conversation.close()
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None


def _result(turn: TurnResult, use: Mapping[str, Any]) -> dict[str, Any]:
    tool_use_id = str(use["id"])
    block = turn.results.get(tool_use_id)
    if block is None:
        raise CliCrash(f"Claude Code sent no tool_result for {tool_use_id!r}")
    content = block.get("content")
    for part in content if isinstance(content, list) else ():
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in _CARRIED_BLOCKS:  # PROTO-UNSUPPORTED-1: shown as it is, or not at all
            raise Unmappable(
                f"the tool_result of {tool_use_id!r} holds a {kind!r} block "
                "(2.1.332's ToolSearch answers tool_reference blocks), which protocol v1 "
                "cannot carry"
            )
    outcome: dict[str, Any] = {"dedup": inference.is_dedup_stub(block)}
    structured = turn.structured.get(tool_use_id)
    if isinstance(structured, dict):
        outcome["output"] = structured
    events = [
        {
            "type": "permission_request",
            "id": tool_use_id,
            "tool": str(use.get("name")),
            "answer": prompt["answer"],
        }
        for prompt in turn.prompts
        if prompt.get("tool_use_id") in (tool_use_id, None)
    ]
    return {"tool_result": block, "outcome": outcome, "events": events}


def _is_tool_use(block: Mapping[str, Any]) -> bool:
    return bool(block.get("type", "tool_use") == "tool_use")


def _is_safe(use: Mapping[str, Any]) -> bool:
    """Whether a block joins a concurrency-safe batch, as far as the connector can tell."""
    tool_input = use.get("input")
    if use.get("name") == "Probe":
        return isinstance(tool_input, dict) and tool_input.get("concurrency_safe") is True
    return use.get("name") in _SAFE_BUILT_INS


def _sees_probe_trail(uses: list[dict[str, Any]], *, earlier: int) -> bool:
    """Whether a Probe in ``uses`` starts after another Probe's context modifier applied.

    Every Probe's modifier joins the context once its batch ends (SCHED-CONTEXT-1): a
    Probe of a later call sees it, and so does one of a later batch of the same message.
    Blocks other than Read, Glob, Grep and safe Probes are taken for batches of their own.
    """
    probes_before_batch = earlier
    probes_in_batch = 0
    batch_safe = False
    for use in uses:
        safe = _is_safe(use)
        if not (safe and batch_safe):  # a new batch: the previous one's modifiers now apply
            probes_before_batch += probes_in_batch
            probes_in_batch = 0
        batch_safe = safe
        if use.get("name") == "Probe":
            if probes_before_batch:
                return True
            probes_in_batch += 1
    return False


def _hooks_read_project_dir(settings: Mapping[str, Any]) -> bool:
    """Whether a hook command of a ``begin``'s settings names ``CLAUDE_PROJECT_DIR``.

    Such a hook's result depends on the project directory; hooks that do not
    name it see the same input and cwd as they would with the root as project.
    """
    return "CLAUDE_PROJECT_DIR" in json.dumps(
        [source.get("hooks") for source in settings.values() if isinstance(source, Mapping)]
    )
