"""The tool value's own members: the cascade member, lookup beside ``Tool``, error names."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from reference import errors, registry
from reference.tool import ToolResult, ToolUseContext, build_tool, find_tool
from reference.tools.bash import BASH_TOOL, BashInput
from reference.tools.common import StrictInput
from reference.tools.probe import PROBE_TOOL, ProbeInput

EXPLICIT_ERROR_NAMES = {"NotADirectoryRefusal": "NotADirectoryError"}
"""The only classes whose SPEC name is not their Python name."""


class NoInput(StrictInput):
    pass


def _call(_inp: NoInput, _ctx: ToolUseContext) -> ToolResult:
    return ToolResult({})


def test_a_tool_that_declares_no_cascade_cancels_nothing() -> None:
    """SPEC: SCHED-CASCADE-3, TOOL-DEFAULT-1"""
    tool = build_tool(name="Quiet", input_model=NoInput, call=_call)
    assert tool.cascade_description(NoInput(), errors.ShellError("Exit code 1")) is None


def test_bash_names_its_failed_command_cut_at_forty_characters() -> None:
    """SPEC: SCHED-CASCADE-1, SCHED-CASCADE-2"""
    failure = errors.ShellError("Exit code 1")
    short = BashInput(command="false")
    assert BASH_TOOL.cascade_description(short, failure) == "Bash(false)"
    long = BashInput(command="x" * 41)
    assert BASH_TOOL.cascade_description(long, failure) == f"Bash({'x' * 40}…)"


@pytest.mark.parametrize(
    ("bash_error", "exc", "expected"),
    [
        (True, errors.ProbeFailure("Probe p failed"), "Probe(p)"),
        (False, errors.ProbeFailure("Probe p failed"), None),
        (True, errors.ProbeTimeoutError("Probe p timed out waiting for: q"), None),
        (True, errors.CallAbortedError("aborted"), None),
    ],
)
def test_only_a_probe_failure_with_bash_error_cascades(
    bash_error: bool, exc: BaseException, expected: str | None
) -> None:
    """SPEC: SCHED-CASCADE-1, SCHED-CASCADE-3, PROTO-PROBE-2"""
    inp = ProbeInput(label="p", fail=True, bash_error=bash_error)
    assert PROBE_TOOL.cascade_description(inp, exc) == expected


def test_build_tool_refuses_an_empty_name() -> None:
    """Reference-defined: a tool without a name could never be called (REG-LOOKUP-1)."""
    with pytest.raises(ValueError, match="name"):
        build_tool(name="", input_model=NoInput, call=_call)


def test_lookup_lives_beside_tool_and_the_registry_re_exports_it() -> None:
    """SPEC: REG-LOOKUP-1"""
    assert registry.find_tool is find_tool
    tool = build_tool(name="New", aliases=("Old",), input_model=NoInput, call=_call)
    assert find_tool([tool], "Old") is tool


@pytest.mark.subprocess
def test_the_pipeline_imports_no_tool() -> None:
    """Reference-defined: SPEC section 1, the dispatcher has no per-tool special case."""
    probe = (
        "import sys, reference.scheduler, reference.dispatch; "
        "print(sorted(m for m in sys.modules if m == 'reference.registry' "
        "or m.startswith('reference.tools.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def _named_errors() -> list[type[errors.ToolSystemError]]:
    return [
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.ToolSystemError) and cls.__module__ == errors.__name__
    ]


def test_every_error_is_named_after_its_class_unless_listed() -> None:
    """SPEC: ERR-CODE-1, ERR-CODE-2"""
    names = {cls.__name__: cls.error_name for cls in _named_errors()}
    assert {k: v for k, v in names.items() if k != v} == EXPLICIT_ERROR_NAMES
    assert errors.NotADirectoryRefusal.error_name == "NotADirectoryError"


def test_bad_request_and_the_pipeline_names_are_under_the_root() -> None:
    """SPEC: DISP-FIND-1, DISP-SCHEMA-1, HOOK-BLOCK-1, DISP-PERM-1, SCHED-CASCADE-2"""
    assert issubclass(errors.BadRequest, errors.ToolSystemError)
    pipeline = {
        cls.error_name for cls in _named_errors() if issubclass(cls, errors.PipelineError)
    } - {"PipelineError"}
    assert pipeline == {
        "UnknownToolError",
        "InputValidationError",
        "HookBlockedError",
        "PermissionDeniedError",
        "SiblingErrorAbort",
        "UserInterruptAbort",
    }
