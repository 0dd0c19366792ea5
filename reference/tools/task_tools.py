"""TaskOutput and TaskStop: reading and stopping Bash's background tasks (SPEC.md 17.4).

Both look the task up in the session's task board (:mod:`reference.tasks`)
in ``validate_input`` (BASH-TASKCHECK-1), so an unknown id, or stopping a
task that already ended, is refused before any permission or hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import Field

from reference import errors
from reference.tasks import BackgroundTask
from reference.tool import (
    PermissionCheck,
    ResultContent,
    Tool,
    ToolResult,
    ToolUseContext,
    build_tool,
)
from reference.tools.common import JsonInt, StrictInput

TASK_OUTPUT: Final = "TaskOutput"
TASK_STOP: Final = "TaskStop"
DEFAULT_WAIT_MS: Final = 30_000  # BASH-TASKOUTPUT-1
MAX_WAIT_MS: Final = 600_000
ALLOW: Final = PermissionCheck("allow")  # TOOL-PROPS-1: both tools' own check


class TaskOutputInput(StrictInput):
    task_id: str = Field(description="The ID of the background task")
    block: bool = Field(default=True, description="Wait for the task to end")
    timeout: JsonInt = Field(
        default=DEFAULT_WAIT_MS, ge=0, le=MAX_WAIT_MS, description="Longest wait in milliseconds"
    )


class TaskStopInput(StrictInput):
    task_id: str = Field(description="The ID of the background task to stop")


def _task(task_id: str, ctx: ToolUseContext) -> BackgroundTask:
    """BASH-TASKCHECK-1, code 1: only this session's tasks exist."""
    task = ctx.session.tasks.get(task_id)
    if task is None:
        raise errors.TaskNotFoundError(f"No task found with ID: {task_id}")
    return task


def _not_running(task: BackgroundTask, status: str) -> errors.TaskNotRunningError:
    return errors.TaskNotRunningError(f"Task {task.task_id} is not running (status: {status}).")


def validate_output(inp: TaskOutputInput, ctx: ToolUseContext) -> None:
    _task(inp.task_id, ctx)


def validate_stop(inp: TaskStopInput, ctx: ToolUseContext) -> None:
    """BASH-TASKCHECK-1: unknown (code 1), then not running (code 2)."""
    task = _task(inp.task_id, ctx)
    status, _ = ctx.session.tasks.snapshot(task)
    if status != "running":
        raise _not_running(task, status)


def output_call(inp: TaskOutputInput, ctx: ToolUseContext) -> ToolResult:
    """BASH-TASKOUTPUT-1: wait while blocking, then the status and the whole output."""
    board = ctx.session.tasks
    task = _task(inp.task_id, ctx)
    if inp.block and board.snapshot(task)[0] == "running":
        task.wait(inp.timeout / 1000, ctx.abort)
        if ctx.abort.is_set():
            raise errors.CallAbortedError("aborted")  # SCHED-ABORT-1
    status, code = board.snapshot(task)  # before the output: an ended task's output is whole
    output = task.read_output().rstrip("\n")
    return ToolResult(
        {
            "task_id": task.task_id,
            "status": status,
            "exit_code": code if status in ("completed", "failed") else None,
            "output": output,
        }
    )


def map_output(data: Mapping[str, Any]) -> ResultContent:
    """BASH-TASKOUTPUT-1: the tagged lines; no exit code while running or when killed."""
    lines = [f"<task_id>{data['task_id']}</task_id>", f"<status>{data['status']}</status>"]
    if data["exit_code"] is not None:
        lines.append(f"<exit_code>{data['exit_code']}</exit_code>")
    lines.append("<output>")
    if data["output"]:
        lines.append(data["output"])
    lines.append("</output>")
    return "\n".join(lines)


def stop_call(inp: TaskStopInput, ctx: ToolUseContext) -> ToolResult:
    """BASH-TASKSTOP-1: SIGTERM to the group, SIGKILL 2 s later, the task ``killed``."""
    board = ctx.session.tasks
    task = _task(inp.task_id, ctx)
    if not board.stop(task):  # it ended between validate_input and here
        raise _not_running(task, board.snapshot(task)[0])
    return ToolResult(
        {
            "message": f"Successfully stopped task: {task.task_id} ({task.command})",
            "task_id": task.task_id,
            "command": task.command,
        }
    )


TASK_OUTPUT_TOOL: Final[Tool[TaskOutputInput]] = build_tool(
    name=TASK_OUTPUT,
    aliases=("BashOutput",),
    input_model=TaskOutputInput,
    call=output_call,
    validate_input=validate_output,
    description=(
        "Reads the status and the whole output so far of a background Bash task, "
        "waiting for it to end when block is true."
    ),
    error_codes={errors.TaskNotFoundError: 1},
    is_concurrency_safe=lambda _inp: True,
    is_read_only=lambda _inp: True,
    map_result=map_output,
    max_result_size_chars=30_000,
    check_permissions=lambda _inp, _ctx: ALLOW,
    classifier_input=lambda inp: inp.task_id,
)

TASK_STOP_TOOL: Final[Tool[TaskStopInput]] = build_tool(
    name=TASK_STOP,
    aliases=("KillShell",),
    input_model=TaskStopInput,
    call=stop_call,
    validate_input=validate_stop,
    description="Stops a running background Bash task.",
    error_codes={errors.TaskNotFoundError: 1, errors.TaskNotRunningError: 2},
    is_destructive=lambda _inp: True,  # TOOL-PROPS-1: stopping a task
    map_result=lambda data: str(data["message"]),
    check_permissions=lambda _inp, _ctx: ALLOW,
    classifier_input=lambda inp: inp.task_id,
)
