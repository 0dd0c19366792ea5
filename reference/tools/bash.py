"""Bash: one shell command per call, in its own process group (SPEC.md section 17.4).

Theory of operation. A foreground call runs ``SHELL -c SCRIPT`` (BASH-EXEC-1)
where SCRIPT is the command preceded, on the same line, by an ``EXIT`` trap
that writes the shell's logical working directory to a file the engine
chose; when the shell ends, that directory becomes the session's ``cwd``
through a context modifier, or the original ``cwd`` with a notice when it is
outside the working directories (BASH-CWD-1). Nothing else of the shell
survives it (BASH-ENV-1). One loop reads the merged output, reports progress
(BASH-PROGRESS-1), and stops the process group on timeout (BASH-TIMEOUT-2)
or abort (SCHED-ABORT-1): SIGTERM, then SIGKILL two seconds later.

A background call (BASH-BG-1) hands the command, without the trap, to the
session's task board (:mod:`reference.tasks`) and returns at once.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import Field

from reference import errors
from reference.abort import AbortSignal
from reference.permissions import bash_rules
from reference.permissions.checks import check_bash_permissions
from reference.permissions.directories import is_inside_working_directories
from reference.profiles import Profile
from reference.settings import positive_int
from reference.tasks import (
    STOP_GRACE_S,
    choose_shell,
    exit_code,
    shell_environment,
    signal_group,
    spawn,
)
from reference.tool import (
    ContextModifier,
    ResultContent,
    Tool,
    ToolResult,
    ToolUseContext,
    build_tool,
)
from reference.tools.common import JsonInt, StrictInput

NAME: Final = "Bash"
DEFAULT_TIMEOUT_MS: Final = 120_000  # BASH-TIMEOUT-1
MAX_TIMEOUT_MS: Final = 600_000
DEFAULT_TIMEOUT_ENV: Final = "BASH_DEFAULT_TIMEOUT_MS"
MAX_TIMEOUT_ENV: Final = "BASH_MAX_TIMEOUT_MS"
MAINTAIN_CWD_ENV: Final = "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR"
NO_BACKGROUND_ENV: Final = "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"
MAX_RESULT_CHARS: Final = 30_000  # TOOL-PROPS-1, BASH-RESULT-1
NO_OUTPUT: Final = "(Bash completed with no output)"  # BASH-RESULT-1
FAILURE_OUTPUT_LIMIT: Final = 10_000  # BASH-FAIL-2
FAILURE_OUTPUT_KEEP: Final = 5_000
PROGRESS_INTERVAL_S: Final = 0.5  # BASH-PROGRESS-1
PROGRESS_LINES: Final = 5
TICK_S: Final = 0.05
DRAIN_S: Final = 0.25  # output a detached grandchild keeps open is read this long
READ_CHUNK: Final = 65536
CAPTURE_HEAD_BYTES: Final = 2 * 1024 * 1024  # BASH-CAPTURE-1
CAPTURE_TAIL_BYTES: Final = 2 * 1024 * 1024
# BASH-EXIT-1: programs for which exit code 1 is not a failure.
EXIT_ONE_OK: Final = frozenset({"grep", "egrep", "fgrep", "rg", "find", "diff", "test", "["})
GIT_EXIT_ONE_OK: Final = frozenset({"diff", "grep"})


class BashInput(StrictInput):
    command: str = Field(description="The command to execute")
    timeout: JsonInt | None = Field(
        default=None, ge=1, description="Optional timeout in milliseconds"
    )
    description: str | None = Field(
        default=None, description="A short description of what the command does"
    )
    run_in_background: bool = Field(
        default=False, description="Run the command in the background; read it with TaskOutput"
    )


def is_read_only(inp: BashInput) -> bool:
    """BASH-READONLY-1 (also concurrency safety, TOOL-PROPS-1)."""
    return bash_rules.is_read_only_command(inp.command)


def validate_input(inp: BashInput, ctx: ToolUseContext) -> None:
    """BASH-VALIDATE-1: the table of section 17.4, in order."""
    if "\x00" in inp.command:
        raise errors.InvalidCommandError(
            "Command must not contain NUL characters.", text="bash_nul_command"
        )
    given = "run_in_background" in inp.model_fields_set  # even false: 2.1.88 has no such field then
    if given and ctx.session.env.get(NO_BACKGROUND_ENV) == "1":
        raise errors.BackgroundTasksDisabledError(
            "Background tasks are disabled in this session.", text="bash_background_disabled"
        )


def timeout_ms(requested: int | None, env: Mapping[str, str]) -> int:
    """BASH-TIMEOUT-1: the default, or the request reduced to the ceiling."""
    default = positive_int(env.get(DEFAULT_TIMEOUT_ENV)) or DEFAULT_TIMEOUT_MS
    ceiling = max(default, positive_int(env.get(MAX_TIMEOUT_ENV)) or MAX_TIMEOUT_MS)
    return default if requested is None else min(requested, ceiling)


def format_timeout(ms: int) -> str:
    """BASH-TIMEOUT-2: ``1s``, ``1.5s`` below a minute; ``2m 0s`` from a minute on."""
    if ms < 60_000:
        return f"{ms / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{ms // 60_000}m {ms % 60_000 // 1000}s"


def shorten_for_failure(output: str) -> str:
    """BASH-FAIL-2: over 10,000 characters, the first and last 5,000 around a marker."""
    if len(output) <= FAILURE_OUTPUT_LIMIT:
        return output
    cut = len(output) - 2 * FAILURE_OUTPUT_KEEP
    return (
        f"{output[:FAILURE_OUTPUT_KEEP]}\n\n... [{cut} characters truncated] ...\n\n"
        f"{output[-FAILURE_OUTPUT_KEEP:]}"
    )


def exit_one_is_success(command: str) -> bool:
    """BASH-EXIT-1: the last part's program is one whose exit code 1 means "nothing found"."""
    parts = bash_rules.split_command(command)
    if not parts:
        return False
    words = [
        token.value
        for token in bash_rules.tokens(bash_rules.strip_assignments(parts[-1]))
        if isinstance(token, bash_rules.Word)
    ]
    if not words:
        return False
    if words[0] == "git":
        return len(words) > 1 and words[1] in GIT_EXIT_ONE_OK
    return words[0] in EXIT_ONE_OK


@dataclass(frozen=True, slots=True)
class Finished:
    """How a foreground command ended: its output, exit code, and why it stopped early."""

    output: bytes
    code: int
    stopped: str | None  # "timeout", "abort" or None
    signalled: bool = False
    """The shell itself died by a signal (``code`` is then 128 + N)."""


class _Progress:
    """BASH-PROGRESS-1: the last lines so far, at most every 500 ms, within a second."""

    def __init__(self, report: Callable[[Mapping[str, Any]], None], started: float) -> None:
        self.report = report
        self.started = started
        self.pending_since: float | None = None

    def grew(self, now: float) -> None:
        if self.pending_since is None:
            self.pending_since = now

    def tick(self, now: float, capture: Capture) -> None:
        """Report once new output has waited 500 ms: so at most every 500 ms."""
        if self.pending_since is None or now - self.pending_since < PROGRESS_INTERVAL_S:
            return
        self.pending_since = None
        output = capture.last()
        end = len(output)
        while end and output[end - 1] == 0x0A:  # trailing newlines are no lines
            end -= 1
        newlines = capture.newlines - (len(output) - end)  # up to the last line with text
        start = end
        for _ in range(PROGRESS_LINES):  # only the tail is decoded
            start = output.rfind(b"\n", 0, start)
            if start < 0:
                break
        self.report(
            {
                "type": "bash_progress",
                "output": decode(bytes(output[start + 1 : end])),
                "total_lines": newlines + 1 if end else 0,
                "elapsed_ms": int((now - self.started) * 1000),
            }
        )


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class Capture:
    """BASH-CAPTURE-1: the first and the last bytes of a command's output, and a count of the rest.

    Memory stays under ``CAPTURE_HEAD_BYTES + 2 * CAPTURE_TAIL_BYTES`` however
    much the command prints; the output is the head, a line naming how many
    bytes were dropped, and the tail.
    """

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.newlines = 0  # in the whole output, for BASH-PROGRESS-1's line count

    def add(self, chunk: bytes) -> None:
        self.newlines += chunk.count(b"\n")
        room = CAPTURE_HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        if len(self.tail) > 2 * CAPTURE_TAIL_BYTES:  # trimmed in steps: amortized linear
            excess = len(self.tail) - CAPTURE_TAIL_BYTES
            del self.tail[:excess]
            self.dropped += excess

    def last(self) -> bytes | bytearray:
        """The newest bytes kept, for progress: the tail once there is one."""
        return self.tail if self.tail else self.head

    def output(self) -> bytes:
        """The head, the dropped-bytes line and the last ``CAPTURE_TAIL_BYTES``; or all of it."""
        excess = len(self.tail) - CAPTURE_TAIL_BYTES
        if excess > 0:  # the tail only grows once the head is full
            del self.tail[:excess]
            self.dropped += excess
        if not self.dropped:
            return bytes(self.head + self.tail)
        marker = f"\n\n... [{self.dropped} bytes of output dropped] ...\n\n".encode()
        return bytes(self.head) + marker + bytes(self.tail)


def run_foreground(
    argv: list[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout_s: float,
    abort: AbortSignal,
    report: Callable[[Mapping[str, Any]], None],
) -> Finished:
    """Run one command to its end, its timeout or its abort; never leave the shell running.

    Raises:
        OSError: the process could not be started.
    """
    process = spawn(argv, cwd=cwd, env=env, stdout=subprocess.PIPE)
    assert process.stdout is not None
    fd = process.stdout.fileno()
    readable = select.poll()  # poll, not select: no limit on the descriptor's number
    readable.register(fd, select.POLLIN | select.POLLHUP)
    output = Capture()  # BASH-CAPTURE-1: bounded, however much is printed
    started = time.monotonic()
    progress = _Progress(report, started)
    deadline = started + timeout_s
    stopped: str | None = None
    kill_at: float | None = None
    exited_at: float | None = None
    eof = False
    try:
        while True:
            if eof:  # the shell closed its output but runs on: wait a tick (or the abort)
                if stopped is None:
                    abort.wait(TICK_S)
                else:
                    time.sleep(TICK_S)
            elif readable.poll(TICK_S * 1000):
                chunk = os.read(fd, READ_CHUNK)
                if chunk:
                    output.add(chunk)
                    progress.grew(time.monotonic())
                else:
                    eof = True
            now = time.monotonic()
            if process.poll() is not None:
                exited_at = exited_at if exited_at is not None else now
                if eof or now - exited_at >= DRAIN_S:
                    break  # DRAIN_S: a backgrounded grandchild may hold the pipe open
                continue
            if stopped is None:
                if abort.is_set():
                    stopped = "abort"  # SCHED-ABORT-1
                elif now >= deadline:
                    stopped = "timeout"  # BASH-TIMEOUT-2
                if stopped is not None:
                    signal_group(process.pid, signal.SIGTERM)
                    kill_at = now + STOP_GRACE_S
                else:
                    progress.tick(now, output)
            elif kill_at is not None and now >= kill_at:
                signal_group(process.pid, signal.SIGKILL)
                kill_at = None
    finally:
        if process.poll() is None:  # an unexpected error above: never leave it running
            signal_group(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        process.stdout.close()
    code = process.returncode if process.returncode is not None else -signal.SIGKILL
    return Finished(output.output(), exit_code(code), stopped, signalled=code < 0)


def _with_cwd_trap(command: str, cwd_file: str) -> str:
    """The script: an EXIT trap recording ``pwd -P`` (BASH-CWD-1), then the command."""
    action = f"pwd -P >| {shlex.quote(cwd_file)} 2>/dev/null"
    return f"trap {shlex.quote(action)} EXIT; {command}"


def _final_cwd(cwd_file: str) -> str | None:
    try:
        with open(cwd_file, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read().rstrip("\n")
    except OSError:
        return None
    return text if text.startswith("/") else None


def _cwd_outcome(shell_cwd: str | None, ctx: ToolUseContext) -> tuple[str | None, str]:
    """BASH-CWD-1: the session cwd after the command (None: unchanged) and the reset line."""
    session = ctx.session
    if shell_cwd is None or session.env.get(MAINTAIN_CWD_ENV) == "1":
        return None, ""
    if is_inside_working_directories(shell_cwd, session):  # PERM-DIRS-1
        return shell_cwd, ""
    return session.original_cwd, f"Shell cwd was reset to {session.original_cwd}"


def _start_directory(ctx: ToolUseContext) -> str:
    """BASH-EXEC-1: the current cwd; the original one when the current was removed."""
    return ctx.cwd if os.path.isdir(ctx.cwd) else ctx.session.original_cwd


def call(inp: BashInput, ctx: ToolUseContext) -> ToolResult:
    session = ctx.session
    shell = choose_shell(session.env)
    # BASH-ENV-1: a new shell and environment per call; only the cwd carries over
    env = shell_environment(session.env, session.home)
    if inp.run_in_background:
        return _background(inp, ctx, [shell, "-c", inp.command], env)
    limit = timeout_ms(inp.timeout, session.env)
    handle, cwd_file = tempfile.mkstemp(prefix="toolsys-bash-cwd-")
    os.close(handle)
    try:
        finished = run_foreground(
            [shell, "-c", _with_cwd_trap(inp.command, cwd_file)],
            cwd=_start_directory(ctx),
            env=env,
            timeout_s=limit / 1000,
            abort=ctx.abort,
            report=ctx.progress,  # BASH-PROGRESS-1, TOOL-CALL-1
        )
        shell_cwd = _final_cwd(cwd_file)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(cwd_file)
    output = decode(finished.output).rstrip("\n")
    if finished.stopped == "abort":
        raise errors.CallAbortedError("aborted")  # SCHED-ABORT-1
    if finished.stopped == "timeout":  # BASH-TIMEOUT-2, in the profile's words
        shown = shorten_for_failure(output) + "\n" if output else ""
        raise errors.BashTimeoutError(
            session.profile.text(
                "bash_timeout", output=shown, duration=format_timeout(limit), seconds=limit // 1000
            )
        )
    new_cwd, reset_line = _cwd_outcome(shell_cwd, ctx)
    profile = session.profile
    code = finished.code
    if finished.signalled and profile.signal_death_code is not None:
        code = profile.signal_death_code  # BASH-FAIL-1 under the session's profile
    if code != 0 and not (code == 1 and exit_one_is_success(inp.command)):  # BASH-EXIT-1
        whole = profile.bash_failure_shortens_message  # BASH-FAIL-2 under the profile
        lines = [f"Exit code {code}"]  # BASH-FAIL-1, BASH-FAIL-2
        lines += [output if whole else shorten_for_failure(output)] if output else []
        # BASH-CWD-1: the reset line, where the profile's release adds it to a failure
        lines += [reset_line] if reset_line and profile.bash_failure_reset_line else []
        message = "\n".join(lines)
        # BASH-FAIL-2: where the profile's release decides by the output's length alone
        over = len(output) > FAILURE_OUTPUT_LIMIT or not profile.bash_failure_limit_on_output
        raise errors.ShellError(shorten_for_failure(message) if whole and over else message)
    stdout = output.lstrip("\n").rstrip()
    if profile.bash_output == "release":  # BASH-RESULT-1 as the releases shape it
        data: dict[str, Any] = {
            "stdout": stdout,
            "stderr": f"\n{reset_line}" if reset_line else "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": _expects_no_output(inp.command),
        }
    else:
        data = {
            "stdout": stdout,
            "stderr": reset_line,
            "exitCode": code,
            "interrupted": False,
            "backgroundTaskId": None,
        }
    return ToolResult(  # BASH-RESULT-1
        data, context_modifier=None if new_cwd is None else _cwd_modifier(new_cwd)
    )


def _expects_no_output(command: str) -> bool:
    """BASH-RESULT-1 as the releases shape it: ``noOutputExpected`` for a command of ``cd``
    parts alone (``cd sub``; not ``cd / && echo moved``)."""
    parts = bash_rules.split_command(command) or ()
    return bool(parts) and all(part.split()[:1] == ["cd"] for part in parts)


def _cwd_modifier(cwd: str) -> ContextModifier:
    """BASH-CWD-1: applied between batches when the call was not concurrency-safe."""

    def modify(ctx: ToolUseContext) -> ToolUseContext:
        return ctx.with_cwd(cwd)  # SCHED-CONTEXT-1, TOOL-MODIFIER-1

    return modify


def _background(
    inp: BashInput, ctx: ToolUseContext, argv: list[str], env: Mapping[str, str]
) -> ToolResult:
    """BASH-BG-1: start the task and return at once; no timeout, no cwd change."""
    session = ctx.session
    task = session.tasks.start(
        inp.command,
        argv,
        cwd=_start_directory(ctx),
        env=env,
        directory=os.path.join(session.session_dir, "tasks"),
    )
    notice = (
        f"Command running in background with ID: {task.task_id}. "
        f"Output is being written to: {task.output_path}"
    )
    return ToolResult(
        {
            "stdout": notice,
            "stderr": "",
            "exitCode": None,
            "interrupted": False,
            "backgroundTaskId": task.task_id,
        }
    )


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    """BASH-RESULT-1: the output, then the reset line; the fixed text when both are empty."""
    parts = (data["stdout"], data["stderr"].lstrip("\n"))
    text = "\n".join(part for part in parts if part)
    return text or NO_OUTPUT


def cascade_description(inp: BashInput, _exc: BaseException) -> str:
    """SCHED-CASCADE-1, SCHED-CASCADE-2: a Bash failure at ``call`` cancels its batch.

    The DESC names the command, cut at 40 characters.
    """
    command = inp.command
    return f"Bash({command[:40]}…)" if len(command) > 40 else f"Bash({command})"


BASH_TOOL: Final[Tool[BashInput]] = build_tool(
    name=NAME,
    input_model=BashInput,
    call=call,
    validate_input=validate_input,
    description=(
        "Executes a shell command in the session's working directory and returns its "
        "output. The working directory carries over between calls; nothing else does."
    ),
    error_codes={
        errors.InvalidCommandError: 2,
        errors.BackgroundTasksDisabledError: 3,
    },
    is_concurrency_safe=is_read_only,  # BASH-READONLY-1
    is_read_only=is_read_only,
    map_result=map_result,
    max_result_size_chars=MAX_RESULT_CHARS,
    check_permissions=check_bash_permissions,  # BASH-PERM-1
    classifier_input=lambda inp: inp.command,
    interrupt_behavior="block",
    cascade_description=cascade_description,
)
