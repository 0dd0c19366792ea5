"""A protocol tool_use turned into the agent's own tool call, through its definition.

A ``ToolMap``'s ``input`` is ``same`` (the input as it is) or a template: a
JSON value in which

- ``"$key"`` is the protocol input's value for ``key`` (a dict entry whose
  key is absent is left out);
- ``{"$sum": [a, b, ...]}`` adds integers (an offset base: ``["$offset", -1]``);
  absent when one operand is;
- ``{"$default": [a, b, ...]}`` is the first operand present;
- ``{"$apply_patch_add": {"path": …, "content": …}}`` and
  ``{"$apply_patch_update": {"path": …, "old": …, "new": …}}`` write the
  freeform patch codex's ``apply_patch`` takes (``apply_patch``);
- anything else is itself (a constant the agent's schema requires).

Honesty (the mapping never adds behaviour the agent lacks): a call the
agent's tool cannot be given faithfully raises ``Unmappable`` and the
request is answered ``unsupported`` (PROTO-UNSUPPORTED-1): a non-object
input, a key of the protocol tool's input the template does not carry, a
``fixed`` key with
another value, a key without the companions ``requires`` names, a
``path: absent`` tool asked about a file that exists, a file the mapping
must read that is not a regular one (``file_on_disk``), and whatever an
encoder cannot express. Nothing is rewritten but names, bases and shapes.
A key no protocol tool input has (a model's stray argument, DISP-SCHEMA-1)
goes to the agent as it is, under its own name, for the agent's own
validation to judge.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel

from conformance.errors import ConformanceError
from conformance.peers.agent import apply_patch
from conformance.peers.agent.definition import ToolMap
from conformance.peers.peer_rules import Unmappable
from reference.tools.bash import BashInput
from reference.tools.edit import EditInput
from reference.tools.glob import GlobInput
from reference.tools.grep.tool import GrepInput
from reference.tools.read.tool import ReadInput
from reference.tools.write import WriteInput

__all__ = ["AgentCall", "file_on_disk", "map_call", "protocol_keys"]

_REFERENCE: Final = re.compile(r"^\$([\w-]+)$")
_ABSENT: Final = object()

ReadFile = Callable[[str], bytes | None]
"""What a file's bytes are on disk now (None when there is no such file)."""

MAX_FILE_BYTES: Final = 64 * 1024 * 1024
"""The largest file a mapping reads to build an agent's call (a patch needs its text)."""


def file_on_disk(path: str) -> bytes | None:
    """The ``ReadFile`` of a live session: the regular file's bytes at ``path`` now.

    None when nothing is there. The file is opened without blocking and checked before it is
    read, so a FIFO or a device never stalls the connector; anything there that is not a
    regular file, cannot be opened, or is over ``MAX_FILE_BYTES`` is ``Unmappable``: the call
    needs a text the connector cannot take from it, and the scenario is not applicable.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as exc:
        raise Unmappable(f"the mapping cannot read {path!r} to build the call: {exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unmappable(f"{path!r} is not a regular file; the mapping reads a file's text")
        if info.st_size > MAX_FILE_BYTES:
            raise Unmappable(f"{path!r} is over {MAX_FILE_BYTES} bytes; the mapping reads it whole")
        chunks: list[bytes] = []
        left = MAX_FILE_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise Unmappable(f"{path!r} grew over {MAX_FILE_BYTES} bytes while it was read")
        return b"".join(chunks)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class AgentCall:
    """The agent's tool call playing one protocol tool_use."""

    name: str
    kind: str
    arguments: Mapping[str, Any] | str


def map_call(
    protocol_tool: str, tool_map: ToolMap, tool_input: object, read_file: ReadFile
) -> AgentCall:
    """The agent's call for a protocol ``protocol_tool`` call with ``tool_input``.

    Raises:
        Unmappable: the input cannot be given to the agent's tool faithfully.
    """
    agent = tool_map.tool
    if not isinstance(tool_input, Mapping):
        raise Unmappable(f"{agent} takes an object; {protocol_tool}'s input here is not one")
    for key, value in tool_map.fixed.items():
        if key in tool_input and tool_input[key] != value:
            raise Unmappable(f"{agent} behaves as {protocol_tool}'s {key}={value!r} only")
    for key, companions in tool_map.requires.items():
        missing = [c for c in companions if c not in tool_input]
        if key in tool_input and missing:
            raise Unmappable(f"{agent} takes {key} only together with {', '.join(missing)}")
    if tool_map.path == "absent":
        path = tool_input.get("file_path")
        if isinstance(path, str) and read_file(path) is not None:
            raise Unmappable(
                f"{agent} plays {protocol_tool} only for a file that does not exist yet "
                "(it cannot overwrite one)"
            )
    if tool_map.input == "same":
        arguments: Any = {k: v for k, v in tool_input.items() if k not in tool_map.fixed}
    else:
        used: set[str] = set()
        arguments = _fill(tool_map.input, tool_input, used, read_file)
        extra = set(tool_input) - used - set(tool_map.fixed)
        uncarried = sorted(extra & protocol_keys(protocol_tool))
        if uncarried:
            raise Unmappable(f"{agent} has no counterpart for {protocol_tool}'s {uncarried}")
        if extra and isinstance(arguments, dict):
            arguments.update({key: tool_input[key] for key in sorted(extra)})
    if tool_map.kind == "custom":
        if not isinstance(arguments, str):
            raise Unmappable(f"the template of {agent} (a freeform tool) makes no text")
    elif not isinstance(arguments, dict):
        raise Unmappable(f"the template of {agent} makes no object")
    return AgentCall(agent, tool_map.kind, arguments)


@functools.cache
def protocol_keys(protocol_tool: str) -> frozenset[str]:
    """The input keys of a protocol tool (aliases such as Grep's ``-i`` included)."""
    models: dict[str, type[BaseModel]] = {
        "Read": ReadInput,
        "Write": WriteInput,
        "Edit": EditInput,
        "Glob": GlobInput,
        "Grep": GrepInput,
        "Bash": BashInput,
    }
    model = models.get(protocol_tool)
    if model is None:
        return frozenset()
    return frozenset(
        key
        for name, field in model.model_fields.items()
        for key in (name, field.alias)
        if key is not None
    )


def _fill(template: Any, tool_input: Mapping[str, Any], used: set[str], read_file: ReadFile) -> Any:
    """The template with references, operators and encoders applied; ``_ABSENT`` if absent."""
    if isinstance(template, str):
        match = _REFERENCE.match(template)
        if match is None:
            return template
        used.add(match[1])
        return tool_input.get(match[1], _ABSENT)
    if isinstance(template, Mapping):
        if len(template) == 1:
            ((operator, operand),) = template.items()
            if operator.startswith("$"):
                return _operate(str(operator), operand, tool_input, used, read_file)
        out: dict[str, Any] = {}
        for key, value in template.items():
            filled = _fill(value, tool_input, used, read_file)
            if filled is not _ABSENT:
                out[str(key)] = filled
        return out
    if isinstance(template, Sequence):
        items = [_fill(value, tool_input, used, read_file) for value in template]
        if any(item is _ABSENT for item in items):
            raise Unmappable("a list item of the mapping names an input key that is absent")
        return items
    return template


def _operate(
    operator: str, operand: Any, tool_input: Mapping[str, Any], used: set[str], read_file: ReadFile
) -> Any:
    if operator == "$sum":
        values = [_fill(v, tool_input, used, read_file) for v in _operands(operator, operand)]
        if any(v is _ABSENT for v in values):
            return _ABSENT
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise Unmappable(f"an offset base applies to integers only, not {values!r}")
        return sum(values)
    if operator == "$default":
        for value in _operands(operator, operand):
            filled = _fill(value, tool_input, used, read_file)
            if filled is not _ABSENT:
                return filled
        return _ABSENT
    if operator in {"$apply_patch_add", "$apply_patch_update"}:
        if not isinstance(operand, Mapping):
            raise ConformanceError(f"{operator} takes a mapping of its parts")
        parts = {str(k): _fill(v, tool_input, used, read_file) for k, v in operand.items()}
        texts = {k: v for k, v in parts.items() if v is not _ABSENT}
        if not all(isinstance(v, str) for v in texts.values()):
            raise Unmappable(f"{operator} takes text parts only")
        try:
            if operator == "$apply_patch_add":
                return apply_patch.add_file(texts["path"], texts["content"])
            return apply_patch.update_file(
                texts["path"], texts["old"], texts["new"], read_file(texts["path"])
            )
        except KeyError as exc:
            raise Unmappable(f"{operator} lacks its {exc.args[0]} part") from exc
        except apply_patch.Inexpressible as exc:
            raise Unmappable(str(exc)) from exc
    raise ConformanceError(f"unknown template operator {operator}")


def _operands(operator: str, operand: Any) -> list[Any]:
    if not isinstance(operand, list) or not operand:
        raise ConformanceError(f"{operator} takes a non-empty list")
    return operand
