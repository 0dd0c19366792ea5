"""YAML to plain JSON values, remembering the line of every node.

PyYAML's ``safe_load`` forgets where values came from, accepts duplicate keys
(the last wins) and produces dates, sets and byte strings. Scenario files must
be plain JSON data so that any implementation sees exactly what the author
wrote, and every complaint must name a line; so documents are composed into
nodes and built here, with each node's line recorded under its path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from conformance.errors import Problem

__all__ = ["Located", "NodePath", "format_path", "load_located"]

NodePath = tuple[str | int, ...]
"""A location inside a document: mapping keys and sequence indices."""

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SCALARS = (str, int, float, bool, type(None))
_MAX_DEPTH = 64
_MERGE_TAG = "tag:yaml.org,2002:merge"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class Located:
    """A document's data and the 1-based line of each of its nodes."""

    data: Any
    lines: Mapping[NodePath, int]

    def line_of(self, path: Sequence[str | int]) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        probe: NodePath = tuple(path)
        while True:
            line = self.lines.get(probe)
            if line is not None or not probe:
                return line
            probe = probe[:-1]

    def key_line(self, path: Sequence[str | int]) -> int | None:
        """The line of the mapping key that ends ``path`` (its value may start later)."""
        return self.lines.get((*tuple(path), _KEY)) or self.line_of(path)


_KEY = "\x00key"


def format_path(path: Sequence[str | int]) -> str:
    """``("steps", 2, "expect")`` -> ``steps[2].expect``; odd keys as ``files["a.txt"]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _IDENT.match(part):
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
        elif out:
            out += f".{part}"
        else:
            out = part
    return out


def load_located(text: str, file: str) -> tuple[Located | None, list[Problem]]:
    """Parse one YAML document into JSON values; on problems, the data is None."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else mark.line + 1
        return None, [Problem(file, line, "", f"YAML syntax: {exc.problem or exc}")]
    except yaml.YAMLError as exc:
        return None, [Problem(file, None, "", f"YAML: {exc}")]
    finally:
        loader.dispose()
    if node is None:
        return None, [Problem(file, 1, "", "the file is empty")]
    builder = _Builder(loader, file)
    data = builder.build(node, ())
    if builder.problems:
        return None, builder.problems
    return Located(data, builder.lines), []


def _surprising(node: yaml.Node, value: Any) -> bool:
    """Plain scalars YAML 1.1 turns into something a reader would not expect.

    ``on``/``off``/``yes``/``no`` become booleans, ``0644`` an octal integer,
    ``1:30`` a base-60 integer; JSON-minded authors mean strings or decimals.
    """
    if not isinstance(node, yaml.ScalarNode) or node.style:  # "" or None: plain
        return False
    text = node.value.lstrip("+-")
    if isinstance(value, bool):
        return text.lower() not in ("true", "false")
    if isinstance(value, int | float):
        return ":" in text or "_" in text or (len(text) > 1 and text[0] == "0" and text[1] != ".")
    return False


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, file: str) -> None:
        self.loader = loader
        self.file = file
        self.lines: dict[NodePath, int] = {}
        self.problems: list[Problem] = []

    def _fail(self, node: yaml.Node, path: NodePath, message: str) -> None:
        self.problems.append(
            Problem(self.file, node.start_mark.line + 1, format_path(path), message)
        )

    def build(self, node: yaml.Node, path: NodePath) -> Any:
        self.lines[path] = node.start_mark.line + 1
        if len(path) > _MAX_DEPTH:
            self._fail(node, path, f"nested deeper than {_MAX_DEPTH} levels")
            return None
        if isinstance(node, yaml.MappingNode):
            return dict(self._pairs(node, path))
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        value = self.loader.construct_object(node, deep=True)
        if not isinstance(value, _SCALARS):
            self._fail(node, path, f"{node.tag} is not a JSON value; quote it to make a string")
            return None
        if _surprising(node, value):
            message = f"YAML 1.1 reads {node.value!r} as {value!r}; quote it if a string was meant"
            self._fail(
                node, path, message + ("" if isinstance(value, bool) else ", or write it plainly")
            )
            return None
        return value

    def _pairs(self, node: yaml.MappingNode, path: NodePath) -> Iterator[tuple[str, Any]]:
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                self._fail(key_node, path, "merge keys (<<) are not supported")
                continue
            key = (
                self.loader.construct_object(key_node)
                if isinstance(key_node, yaml.ScalarNode)
                else None
            )
            if not isinstance(key, str):
                self._fail(key_node, path, f"mapping key {key_node.value!r} must be a string")
                continue
            if key in seen:
                self._fail(key_node, (*path, key), "duplicate key")
                continue
            seen.add(key)
            self.lines[(*path, key, _KEY)] = key_node.start_mark.line + 1
            yield key, self.build(value_node, (*path, key))
