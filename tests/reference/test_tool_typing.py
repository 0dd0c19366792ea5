"""The tool layer is typed: mypy rejects a tool definition that does not fit its model.

``Tool`` is generic over its input model and ``build_tool`` takes one keyword per
member (TOOL-DEFAULT-1), so a misspelled member, a ``call`` written for another
model, a predicate reading a field the model lacks and a stage SPEC 0.3 does
not name are type errors. One mypy run (about three seconds, its cache in a
temporary directory) checks a snippet holding each fault once, next to a correct
definition that must pass, so the test fails if mypy stops seeing the faults or
starts rejecting a good tool.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = """\
from reference.dispatch import CallOutcome
from reference.tool import Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.bash import BashInput
from reference.tools.probe import ProbeInput, call

good: Tool[ProbeInput] = build_tool(
    name="Probe", input_model=ProbeInput, call=call, is_read_only=lambda inp: inp.fail
)
misspelled = build_tool(  # FAULT call-arg
    name="Probe", input_model=ProbeInput, call=call, is_concurency_safe=lambda inp: True
)
mismatched = build_tool(name="Probe", input_model=BashInput, call=call)  # FAULT arg-type
unknown_field = build_tool(  # FAULT attr-defined
    name="Probe", input_model=ProbeInput, call=call, is_read_only=lambda inp: inp.command
)
outcome = CallOutcome(  # FAULT arg-type
    tool_use_id="t", content="", is_error=True, stage="finished"
)


def bash_call(inp: BashInput, ctx: ToolUseContext) -> ToolResult:
    return ToolResult({"command": inp.command})


declared: Tool[ProbeInput] = build_tool(  # FAULT arg-type
    name="Bash", input_model=BashInput, call=bash_call
)
"""


def _expected(snippet: str) -> set[tuple[int, str]]:
    """(line, error code) of every ``# FAULT code`` marker."""
    found = set()
    for number, line in enumerate(snippet.splitlines(), start=1):
        marker = re.search(r"# FAULT ([\w-]+)", line)
        if marker:
            found.add((number, marker.group(1)))
    return found


def _reported(stdout: str, path: Path) -> set[tuple[int, str]]:
    """(line, error code) of every error mypy reported on the statement starting there."""
    errors = set()
    for line in stdout.splitlines():
        match = re.match(rf"{re.escape(str(path))}:(\d+): error: .*\[([\w-]+)\]$", line)
        if match:
            errors.add((int(match.group(1)), match.group(2)))
    return errors


def _statement_start(snippet: str, line: int) -> int:
    """The first line of the statement a mypy error on ``line`` belongs to."""
    lines = snippet.splitlines()
    while line > 1 and lines[line - 1].startswith((" ", ")")):
        line -= 1
    return line


@pytest.mark.slow
def test_mypy_rejects_each_fault_of_a_tool_definition_and_accepts_a_good_one(
    tmp_path: Path,
) -> None:
    """SPEC: TOOL-DEFAULT-1"""
    snippet = tmp_path / "tool_faults.py"
    snippet.write_text(SNIPPET)
    stdout, stderr, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "mypy_cache"),
            "--follow-imports=silent",
            "--no-error-summary",
            "--hide-error-context",
            "--no-pretty",
            "--show-error-codes",
            str(snippet),
        ]
    )
    assert stderr == ""
    reported = {
        (_statement_start(SNIPPET, line), code) for line, code in _reported(stdout, snippet)
    }
    assert reported == _expected(SNIPPET), stdout
    assert status == 1
