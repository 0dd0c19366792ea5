"""Shell processes: how Bash starts them, stops them, and the session's background tasks.

SPEC.md section 17.4. Every command runs in its own process group
(BASH-EXEC-1) so that stopping it reaches everything it started: SIGTERM to
the group, SIGKILL two seconds later if the shell still runs (SCHED-ABORT-1,
BASH-TIMEOUT-2, BASH-TASKSTOP-1).

A background task (BASH-BG-1) writes its output to ``<session dir>/tasks/ID
.output``; a waiter thread reaps it and records how it ended. Its status is
``running``, then ``completed`` (exit 0), ``failed`` (another code) or
``killed`` (stopped by TaskStop or by the session ending, PROTO-END-1).
Nothing here knows about tools; :mod:`reference.tools.bash` and
:mod:`reference.tools.task_tools` use it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

TaskStatus = Literal["running", "completed", "failed", "killed"]

STOP_GRACE_S: Final = 2.0  # SCHED-ABORT-1: SIGKILL this long after SIGTERM
REAP_S: Final = 5.0  # a SIGKILLed shell is reaped well within this
SHELL_ENV: Final = "CLAUDE_CODE_SHELL"
BASH: Final = "/bin/bash"
SH: Final = "/bin/sh"


class Abortable(Protocol):
    def is_set(self) -> bool: ...


def choose_shell(env: Mapping[str, str]) -> str:
    """BASH-EXEC-1: ``CLAUDE_CODE_SHELL`` when an executable named bash or zsh,
    else ``/bin/bash``, else ``/bin/sh``."""
    named = env.get(SHELL_ENV, "")
    usable = os.path.basename(named) in ("bash", "zsh")
    if usable and os.path.isfile(named) and os.access(named, os.X_OK):
        return named
    return BASH if os.path.exists(BASH) else SH


def shell_environment(session_env: Mapping[str, str], home: str) -> dict[str, str]:
    """BASH-EXEC-1: the engine's process environment overlaid with the session's, and HOME."""
    env = dict(os.environ)
    env.update(session_env)
    env["HOME"] = home
    return env


def exit_code(returncode: int) -> int:
    """BASH-FAIL-1: a death by signal N counts as 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def signal_group(pid: int, sig: int) -> None:
    """Send ``sig`` to the process group ``pid`` leads; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def spawn(
    argv: Sequence[str], *, cwd: str, env: Mapping[str, str], stdout: int
) -> subprocess.Popen[bytes]:
    """BASH-EXEC-1: a new process group, stdin from /dev/null, stderr into stdout.

    ``PWD`` is set to ``cwd`` so that the shell starts in the logical path
    (through symlinks) that an earlier ``cd`` left (BASH-CWD-1).
    """
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env={**env, "PWD": cwd},
        start_new_session=True,
    )


@dataclass(eq=False, kw_only=True)
class BackgroundTask:
    """One ``run_in_background`` command (BASH-BG-1)."""

    task_id: str
    command: str
    output_path: str
    process: subprocess.Popen[bytes]
    status: TaskStatus = "running"
    exit_code: int | None = None
    stopping: bool = False
    ended: threading.Event = field(default_factory=threading.Event)

    def wait(self, timeout_s: float, abort: Abortable) -> None:
        """Wait until the task ends, ``timeout_s`` pass or ``abort`` is set."""
        deadline = time.monotonic() + timeout_s
        while not abort.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.ended.wait(min(remaining, 0.05)):
                return

    def read_output(self) -> str:
        """The whole output so far (BASH-TASKOUTPUT-1: reading consumes nothing)."""
        try:
            with open(self.output_path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return ""
        return data.decode("utf-8", errors="replace")


class TaskBoard:
    """A session's background tasks, ids ``bash_1``, ``bash_2``... in start order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[str, BackgroundTask] = {}
        self._count = 0

    def start(
        self,
        command: str,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        directory: str,
    ) -> BackgroundTask:
        """BASH-BG-1: start ``argv`` with its output going to ``directory/ID.output``.

        Raises:
            OSError: the output file or the process could not be made (the id
                is not used up).
        """
        os.makedirs(directory, exist_ok=True)
        with self._lock:
            task_id = f"bash_{self._count + 1}"
            path = os.path.abspath(os.path.join(directory, f"{task_id}.output"))
            with open(path, "wb") as output:
                process = spawn(argv, cwd=cwd, env=env, stdout=output.fileno())
            self._count += 1
            task = BackgroundTask(
                task_id=task_id, command=command, output_path=path, process=process
            )
            self._tasks[task_id] = task
        threading.Thread(target=self._reap, args=(task,), daemon=True).start()
        return task

    def _reap(self, task: BackgroundTask) -> None:
        code = exit_code(task.process.wait())
        with self._lock:
            task.exit_code = code
            if task.stopping:
                task.status = "killed"
            else:
                task.status = "completed" if code == 0 else "failed"
        task.ended.set()

    def get(self, task_id: str) -> BackgroundTask | None:
        with self._lock:
            return self._tasks.get(task_id)

    def snapshot(self, task: BackgroundTask) -> tuple[TaskStatus, int | None]:
        """The task's status and exit code, read together."""
        with self._lock:
            return task.status, task.exit_code

    def stop(self, task: BackgroundTask) -> bool:
        """BASH-TASKSTOP-1: stop a running task; False when it was no longer running."""
        return bool(self._stop([task]))

    def stop_all(self) -> None:
        """PROTO-END-1 / BASH-BG-1: the session ends, every running task is killed."""
        with self._lock:
            tasks = list(self._tasks.values())
        self._stop(tasks)

    def _stop(self, tasks: Sequence[BackgroundTask]) -> list[BackgroundTask]:
        """SIGTERM to each running task's group, SIGKILL after the grace; all together."""
        with self._lock:
            stopping = [t for t in tasks if t.status == "running" and not t.stopping]
            for task in stopping:
                task.stopping = True
        for task in stopping:
            signal_group(task.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for task in stopping:
            if not task.ended.wait(max(0.0, deadline - time.monotonic())):
                signal_group(task.process.pid, signal.SIGKILL)
        for task in stopping:
            task.ended.wait(REAP_S)
            with self._lock:
                task.status = "killed"
        return stopping
