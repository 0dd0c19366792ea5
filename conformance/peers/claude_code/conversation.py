"""One Claude Code CLI conversation: the process, its scripted model, its turns.

A protocol session is one ``claude -p`` run in the session's cwd. Its first
request to the scripted model is held until the connector has a turn to
send; each turn (``take_turn``) answers the held request with tool_use
blocks and waits for the next one, whose last user message carries the
``tool_result`` blocks exactly as the model would see them. ``close``
answers ``end_turn`` and lets the process exit (killing it when it will
not).

Everything the process does is bounded: start-up, each turn and the exit
have deadlines; past one the process is killed and ``CliTimeout`` raised.
Its stdout (stream-json) is read on a thread for the structured result of
each tool (``tool_use_result``); its stderr is kept, capped, for reports.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from conformance.errors import ConformanceError
from conformance.peers.claude_code.install import Release
from conformance.peers.claude_code.mcp_server import PROMPT_TOOL, SERVER_NAME
from conformance.peers.claude_code.messages_api import MainRequest, ScriptedModel, Turn, answer

__all__ = ["CliCrash", "CliTimeout", "Conversation", "ConversationEnded", "TurnResult"]

_STDERR_KEEP = 64 * 1024
_STDOUT_GRACE = 2.0
_EXIT_WAIT = 15.0
_PROMPT = "Run the tool calls you are given."


class CliTimeout(ConformanceError):
    """The CLI did not reach the next step within its deadline; it has been killed."""


class CliCrash(ConformanceError):
    """The CLI exited, or cannot be started, in the middle of a conversation."""


class ConversationEnded(ConformanceError):
    """The CLI ended the conversation itself after a turn (a hook's ``continue: false`` does).

    That turn was answered; later turns cannot be sent to this conversation.
    """


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What one scripted turn produced: tool_result blocks by id, structured results, prompts."""

    results: dict[str, dict[str, Any]]
    structured: dict[str, Any]
    prompts: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)


class Conversation:
    """A ``claude -p`` run and the request it is waiting on.

    Made with its settings; ``start`` writes its MCP config, serves the
    scripted model, starts the CLI with its two reader threads and waits for
    its first request.
    """

    def __init__(
        self,
        release: Release,
        *,
        cwd: str,
        env: Mapping[str, str],
        flags: Sequence[str],
        work: Path,
        prompt_answer: str,
        test_tools: bool,
        start_timeout: float,
    ) -> None:
        self.model = ScriptedModel()
        self._release = release
        self._cwd = cwd
        self._env = dict(env)
        self._flags = list(flags)
        self._prompt_answer = prompt_answer
        self._test_tools = test_tools
        self._start_timeout = start_timeout
        self.process: subprocess.Popen[str] | None = None
        self._work = work
        self._prompt_log = work / "prompts.jsonl"
        self._prompt_log.touch()
        self._prompt_seen = 0
        self._structured: dict[str, Any] = {}
        self._blocks: dict[str, dict[str, Any]] = {}  # tool_result blocks stream-json showed
        self._stdout_lock = threading.Condition()
        self._stderr: collections.deque[str] = collections.deque()
        self._other_stdout: collections.deque[str] = collections.deque(maxlen=8)
        self._pending: MainRequest | None = None

    def start(self) -> Conversation:
        """Start the CLI and wait for its first request; returns itself.

        Raises:
            CliCrash: the CLI cannot be started or exits before asking.
            CliTimeout: it does not ask within the start timeout.
        """
        release, cwd, env, flags, work = (
            self._release,
            self._cwd,
            self._env,
            self._flags,
            self._work,
        )
        prompt_answer, test_tools, start_timeout = (
            self._prompt_answer,
            self._test_tools,
            self._start_timeout,
        )
        self.model.start()
        servers = {SERVER_NAME: ["--answer", prompt_answer, "--log", str(self._prompt_log)]}
        if test_tools:
            servers["test"] = []
        mcp_config = work / "mcp.json"
        mcp_config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        name: {
                            "type": "stdio",
                            "command": sys.executable,
                            "args": [
                                "-m",
                                "conformance.peers.claude_code.mcp_server",
                                "--role",
                                name,
                                *args,
                            ],
                            "env": {"PYTHONPATH": _project_path()},
                        }
                        for name, args in servers.items()
                    }
                }
            )
        )
        argv = [
            *release.argv,
            "-p",
            _PROMPT,
            "--output-format",
            "stream-json",
            "--verbose",
            "--mcp-config",
            str(mcp_config),
            "--strict-mcp-config",
            "--permission-prompt-tool",
            PROMPT_TOOL,
            *flags,
        ]
        process_env = {
            **env,
            "ANTHROPIC_BASE_URL": self.model.base_url,
            "ANTHROPIC_API_KEY": "toolconf-scripted-model",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "IS_SANDBOX": "1",
        }
        try:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=process_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,
            )
        except OSError as exc:
            self.model.close()
            raise CliCrash(f"cannot start {argv[0]}: {exc}") from exc
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        threading.Thread(target=self._read_stdout, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(self.process.stderr,), daemon=True).start()
        self._pending = self._wait_request(start_timeout, "start")
        return self

    # -- turns --------------------------------------------------------------

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool definitions of the request the CLI is waiting on."""
        return self._pending.tools if self._pending else []

    def take_turn(
        self, blocks: Sequence[Mapping[str, Any]], *, timeout: float, block_delay: float = 0.0
    ) -> TurnResult:
        """Send ``blocks`` as the model's turn; what Claude Code sent back for each.

        Raises:
            CliTimeout: no next request within ``timeout`` (the process is killed).
            CliCrash: the process exited before answering.
        """
        pending = self._pending
        if pending is None:
            raise ConversationEnded(
                f"Claude Code ended the conversation after the previous turn ({self._last_words()})"
            )
        self._pending = None
        answer(pending, Turn(list(blocks), "tool_use", block_delay))
        ids = [str(b["id"]) for b in blocks if b.get("type") == "tool_use"]
        try:
            nxt = self._wait_request(timeout, "turn")
        except CliCrash:
            found = self._results_from_stdout(ids)
            if found is None:
                raise
            return TurnResult(found, self._structured_for(ids), self._new_prompts())
        self._pending = nxt
        results = {
            str(block.get("tool_use_id")): _clean(block)
            for block in nxt.last_user_content
            if isinstance(block, dict) and block.get("type") == "tool_result"
        }
        self._await_stdout(ids)
        return TurnResult(results, self._structured_for(ids), self._new_prompts(), nxt.tools)

    def close(self) -> None:
        """End the conversation: end_turn, then wait for the exit (kill on overrun)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            answer(pending, Turn([{"type": "text", "text": "Done."}], "end_turn"))
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=_EXIT_WAIT)
        self.kill()

    def kill(self) -> None:
        """Stop the process group now and the scripted model with it."""
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, 9)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5.0)
        self.model.close()

    def take_stderr(self) -> str:
        """The CLI's stderr since the last call (capped)."""
        text = "".join(self._stderr)
        self._stderr.clear()
        return text

    # -- internals ----------------------------------------------------------

    def _wait_request(self, timeout: float, what: str) -> MainRequest:
        process = self.process
        if process is None:
            raise CliCrash(f"the CLI was never started ({what})")
        deadline = time.monotonic() + timeout
        while True:
            request = self.model.next_turn(0.1)
            if request is not None:
                return request
            if process.poll() is not None:
                time.sleep(0.2)  # let the reader threads take the last lines
                raise CliCrash(
                    f"the CLI exited with status {process.returncode} ({what}): "
                    f"{self._last_words()}"
                )
            if time.monotonic() > deadline:
                self.kill()
                raise CliTimeout(f"the CLI did not come back within {timeout:g} s ({what})")

    def _last_words(self) -> str:
        """The result text of the CLI's final stream-json record, else its last lines."""
        for line in reversed(self._other_stdout):
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("type") == "result":
                    return f"its result was {str(record.get('result'))[:500]!r}"
        return "its last stream-json lines: " + "".join(self._other_stdout)[-1500:]

    def _read_stdout(self, stream: IO[str]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in stream:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(record, dict) or record.get("type") != "user":
                    self._other_stdout.append(line[:2000])
                    continue
                content = (record.get("message") or {}).get("content")
                if not isinstance(content, list):
                    continue
                with self._stdout_lock:
                    for block in content:
                        if isinstance(block, dict) and block.get("type") == "tool_result":
                            tool_use_id = str(block.get("tool_use_id"))
                            self._blocks.setdefault(tool_use_id, _clean(block))
                            if "tool_use_result" in record:
                                self._structured[tool_use_id] = record["tool_use_result"]
                    self._stdout_lock.notify_all()

    def _read_stderr(self, stream: IO[str]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for chunk in stream:
                self._stderr.append(chunk)
                while sum(map(len, self._stderr)) > _STDERR_KEEP and len(self._stderr) > 1:
                    self._stderr.popleft()

    def _await_stdout(self, ids: Sequence[str]) -> None:
        deadline = time.monotonic() + _STDOUT_GRACE
        with self._stdout_lock:
            while not all(i in self._blocks for i in ids):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._stdout_lock.wait(left)

    def _results_from_stdout(self, ids: Sequence[str]) -> dict[str, dict[str, Any]] | None:
        self._await_stdout(ids)
        with self._stdout_lock:
            found = {i: self._blocks[i] for i in ids if i in self._blocks}
        return found if len(found) == len(ids) else None

    def _structured_for(self, ids: Sequence[str]) -> dict[str, Any]:
        with self._stdout_lock:
            return {i: self._structured[i] for i in ids if i in self._structured}

    def _new_prompts(self) -> list[dict[str, Any]]:
        lines = self._prompt_log.read_text(encoding="utf-8").splitlines()
        new, self._prompt_seen = lines[self._prompt_seen :], len(lines)
        out: list[dict[str, Any]] = []
        for line in new:
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out


def _clean(block: Mapping[str, Any]) -> dict[str, Any]:
    """A tool_result block as protocol v1 carries it: no cache_control, is_error always there."""
    return {
        "type": "tool_result",
        "tool_use_id": block.get("tool_use_id"),
        "content": block.get("content", ""),
        "is_error": bool(block.get("is_error", False)),
    }


def _project_path() -> str:
    return str(Path(__file__).resolve().parents[3])
