"""Scenario files: the frozen values they load into, and the loader.

A scenario is one YAML file (format: shared/design/scenario-format.md and
``schema/scenario.schema.json``). The loader rejects a file with every problem
it finds, each naming the file, the line and the field; a file that loads is
guaranteed to be well-formed, so the runner never meets a malformed step.

Strings are kept exactly as written: placeholders such as ``{root}`` are
expanded by the runner, which alone knows the sandbox.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from conformance.errors import Problem, ScenarioLoadError
from conformance.yamlsource import Located, NodePath, format_path, load_located

__all__ = [
    "SCHEMA_PATH",
    "CallStep",
    "FileSpec",
    "FinalFile",
    "FsStep",
    "Level",
    "MessageStep",
    "RawFilter",
    "RawStep",
    "Scenario",
    "SessionStep",
    "Setup",
    "Step",
    "ToolUse",
    "ToolsStep",
    "discover",
    "load_scenario",
    "load_scenarios",
    "parse_mtime",
    "parse_scenario",
    "scenario_schema",
]

SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "scenario.schema.json"
"""Where the scenario schema lives (shipped as package data)."""

Level: TypeAlias = Literal["MUST", "SHOULD", "MAY"]
FileKind: TypeAlias = Literal["text", "b64", "dir", "symlink", "fifo", "sparse"]
FsOp: TypeAlias = Literal["write", "touch", "delete", "chmod", "symlink", "mkfifo", "mkdir"]

RawFilter: TypeAlias = Callable[[Any], bool]
"""A test of a scenario file's parsed YAML, made before validation: False skips the file."""

_FILE_KINDS: tuple[FileKind, ...] = ("text", "b64", "dir", "symlink", "fifo", "sparse")
_FS_OPS: tuple[FsOp, ...] = ("write", "touch", "delete", "chmod", "symlink", "mkfifo", "mkdir")


@dataclass(frozen=True, slots=True, kw_only=True)
class FileSpec:
    """A file the runner creates in the sandbox before the session begins.

    ``text`` is still unexpanded; ``data`` holds the decoded bytes of ``b64``;
    ``mtime`` is an offset in seconds from the moment of creation.
    """

    path: str
    kind: FileKind
    text: str | None = None
    data: bytes | None = None
    target: str | None = None
    size: int | None = None
    mode: int | None = None
    mtime: float | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Setup:
    """Everything ``begin`` needs, plus the files to materialize first."""

    env: Mapping[str, str] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    prompt: Literal["allow", "deny"] = "allow"
    test_tools: bool = False
    cwd: str | None = None
    files: tuple[FileSpec, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUse:
    """One tool_use block as written; ``id`` None means the runner makes one up.

    ``input`` is usually a mapping but may be any JSON value, so scenarios can
    send the malformed inputs a model might produce; it defaults to ``{}``.
    """

    name: str
    input: Any
    id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CallStep:
    """Send one tool_use through the pipeline and check the response."""

    call: ToolUse
    expect: Mapping[str, Any]
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageStep:
    """Send a whole assistant message through the scheduler.

    ``results`` of ``expect`` has one entry per call when given (None entries
    check nothing). ``streaming``, ``block_delay_ms`` and ``interrupt_after``
    are the message options of SPEC.md PROTO-MESSAGE-2 and PROTO-MESSAGE-3.
    """

    calls: tuple[ToolUse, ...]
    expect: Mapping[str, Any]
    streaming: bool = False
    block_delay_ms: int | None = None
    interrupt_after: tuple[str, ...] | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FsStep:
    """A change the runner makes on disk behind the implementation's back."""

    op: FsOp
    path: str
    text: str | None = None
    data: bytes | None = None
    target: str | None = None
    mode: int | None = None
    mtime: float | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStep:
    """End the session and begin a new one with the same setup."""

    action: Literal["restart"] = "restart"
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsStep:
    """Ask for the session's tool pool (``tools`` command) and check it."""

    expect: Mapping[str, Any]
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RawStep:
    """Send a protocol request as written and check the whole answer.

    For the protocol's own requirements (bad requests and the like): the
    runner adds ``seq`` only when ``request`` has none, an ``error`` answer is
    data rather than a failure, and the runner's session bookkeeping does not
    follow what the request does.
    """

    request: Mapping[str, Any]
    expect: Mapping[str, Any]
    line: int | None = None


Step: TypeAlias = CallStep | MessageStep | FsStep | SessionStep | ToolsStep | RawStep


@dataclass(frozen=True, slots=True, kw_only=True)
class FinalFile:
    """What a sandbox path must hold once every step has passed."""

    path: str
    text: str | None = None
    data: bytes | None = None
    contains: str | None = None
    absent: bool = False
    mode: int | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """One loaded scenario. ``area`` is its directory under the scenarios root."""

    id: str
    title: str
    spec: tuple[str, ...]
    level: Level
    requires: tuple[str, ...] = ()
    setup: Setup = field(default_factory=Setup)
    steps: tuple[Step, ...] = ()
    final: tuple[FinalFile, ...] = ()
    description: str = ""
    path: Path | None = None
    area: str = ""


@functools.cache
def scenario_schema() -> Mapping[str, Any]:
    """The JSON Schema (draft 2020-12) every scenario file must satisfy."""
    text = SCHEMA_PATH.read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(scenario_schema())


def parse_mtime(text: str) -> float:
    """``"+10s"`` -> 10.0; the format is checked by the schema."""
    return float(text[:-1])


def discover(paths: Iterable[Path]) -> list[Path]:
    """The scenario files named by ``paths``: files as given, directories searched for *.yaml."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.yaml") if p.is_file()))
        else:
            found.append(path)
    return found


def load_scenario(path: Path, *, root: Path | None = None) -> Scenario:
    """Load and validate one file; its ``id`` must equal the file name stem.

    ``root`` is the scenarios directory the area is computed from; without it
    the area is the name of the file's directory.

    Raises:
        ScenarioLoadError: with every problem found, each with file, line and field.
    """
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioLoadError(
            path, [Problem(str(path), None, "", f"cannot read: {exc}")]
        ) from exc
    return parse_scenario(text, file=str(path), stem=path.stem, path=path, area=_area(path, root))


def _load_kept(path: Path, root: Path | None, keep: RawFilter | None) -> Scenario | None:
    if keep is None:
        return load_scenario(path, root=root)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return load_scenario(path, root=root)  # raises, naming the problem
    return _parse(
        text, file=str(path), stem=path.stem, path=path, area=_area(path, root), keep=keep
    )


def load_scenarios(
    paths: Iterable[Path], *, root: Path | None = None, keep: RawFilter | None = None
) -> tuple[list[Scenario], list[ScenarioLoadError]]:
    """Load every file under ``paths``; duplicate ids are load errors of the later file.

    ``keep``, when given, sees each file's parsed YAML before the (costlier)
    validation; a file it refuses is skipped without a word, so it must answer
    True for data it cannot judge, or the file's problems go unreported. A
    skipped file takes no part in the duplicate-id check.
    """
    scenarios: list[Scenario] = []
    errors: list[ScenarioLoadError] = []
    seen: dict[str, Path | None] = {}
    for path in discover(paths):
        try:
            scenario = _load_kept(path, root, keep)
        except ScenarioLoadError as exc:
            errors.append(exc)
            continue
        if scenario is None:
            continue
        if scenario.id in seen:
            problem = Problem(
                str(path), None, "id", f"duplicate id, also used by {seen[scenario.id]}"
            )
            errors.append(ScenarioLoadError(path, [problem]))
            continue
        seen[scenario.id] = path
        scenarios.append(scenario)
    return scenarios, errors


def parse_scenario(
    text: str,
    *,
    file: str = "<string>",
    stem: str | None = None,
    path: Path | None = None,
    area: str = "",
) -> Scenario:
    """Validate YAML text as a scenario; ``stem``, when given, must equal the id.

    Raises:
        ScenarioLoadError: with every problem found.
    """
    scenario = _parse(text, file=file, stem=stem, path=path, area=area, keep=None)
    assert scenario is not None, "nothing is skipped without a filter"
    return scenario


def _parse(
    text: str,
    *,
    file: str,
    stem: str | None,
    path: Path | None,
    area: str,
    keep: RawFilter | None,
) -> Scenario | None:
    located, problems = load_located(text, file)
    if located is None:
        raise ScenarioLoadError(file, problems)
    if keep is not None and not keep(located.data):
        return None
    problems = _schema_problems(located, file)
    if not problems:
        problems = list(_semantic_problems(located, file, stem))
    if problems:
        raise ScenarioLoadError(file, problems)
    return _build(located, path=path, area=area)


def _area(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            parts = path.resolve().relative_to(root.resolve()).parts
        except ValueError:
            parts = ()
        if len(parts) > 1:
            return parts[0]
    return path.parent.name


# -- schema problems ----------------------------------------------------------


def _schema_problems(located: Located, file: str) -> list[Problem]:
    problems: list[Problem] = []
    errors = list(_validator().iter_errors(located.data))
    # A step or fs op with two kinds also trips each kind's own field list;
    # the "exactly one of" message says it all.
    ambiguous = {tuple(e.absolute_path) for e in errors if e.validator == "oneOf"}
    for error in errors:
        if error.validator == "additionalProperties" and tuple(error.absolute_path) in ambiguous:
            continue
        for problem in _describe(error, located, file):
            if problem not in problems:
                problems.append(problem)
    problems.sort(key=lambda p: (p.line or 0, p.field))
    return problems


def _describe(error: ValidationError, located: Located, file: str) -> Iterator[Problem]:
    path: NodePath = tuple(error.absolute_path)
    schema: Mapping[str, Any] = error.schema if isinstance(error.schema, Mapping) else {}
    custom = schema.get("x-errors", {}).get(error.validator)
    if "propertyNames" in error.absolute_schema_path and isinstance(error.instance, str):
        key_path = (*path, error.instance)
        message = custom or error.message
        yield Problem(file, located.key_line(key_path), format_path(key_path), message)
    elif custom:
        yield Problem(file, located.line_of(path), format_path(path), custom)
    elif error.context:
        yield from _describe(_best(error.context), located, file)
    elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = list(schema.get("properties", {}))
        for key in error.instance:
            if key in allowed:
                continue
            hint = difflib.get_close_matches(key, allowed, n=1)
            message = f"unknown field {key!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
            if not hint and allowed:
                message += f"; allowed: {', '.join(allowed)}"
            yield Problem(file, located.key_line((*path, key)), format_path((*path, key)), message)
    elif error.validator == "required" and isinstance(error.instance, dict):
        required: list[str] = list(schema.get("required", []))
        for key in required:
            if key not in error.instance:
                yield Problem(
                    file, located.line_of(path), format_path(path), f"missing field {key!r}"
                )
    else:
        yield Problem(file, located.line_of(path), format_path(path), _shorten(error.message))


def _best(errors: Sequence[ValidationError]) -> ValidationError:
    match: ValidationError | None = best_match(errors)
    assert match is not None  # errors is never empty: it is a non-empty context
    return match


def _shorten(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"


# -- semantic problems (only once the schema holds) ----------------------------


def _semantic_problems(located: Located, file: str, stem: str | None) -> Iterator[Problem]:
    data: dict[str, Any] = located.data

    def problem(path: NodePath, message: str) -> Problem:
        return Problem(file, located.line_of(path), format_path(path), message)

    if stem is not None and data["id"] != stem:
        yield problem(("id",), f"id {data['id']!r} must equal the file name stem {stem!r}")
    for path, value in _walk(data, ()):
        if path and path[-1] == "b64" and isinstance(value, str) and _b64(value) is None:
            yield problem(path, "not valid base64")
    for i, step in enumerate(data["steps"]):
        expect = step.get("expect", {})
        for path, value in _walk(expect, ("steps", i, "expect")):
            if path[-1] == "regex" and isinstance(value, str):
                try:
                    re.compile(value)
                except re.error as exc:
                    yield problem(path, f"bad regular expression: {exc}")
        if "message" in step:
            yield from (problem(p, m) for p, m in _message_problems(step, i))
        elif "call" in step:
            known = {step["call"]["id"]} if "id" in step["call"] else set()
            events = expect.get("events", {})
            yield from (problem(p, m) for p, m in _event_id_problems(events, known, ("steps", i)))


def _message_problems(step: Mapping[str, Any], i: int) -> Iterator[tuple[NodePath, str]]:
    ids: list[str] = [call["id"] for call in step["message"] if "id" in call]
    for j, call_id in enumerate(ids):
        if call_id in ids[:j]:
            yield ("steps", i, "message"), f"tool_use id {call_id!r} is used twice"
    known = set(ids)
    expect = step.get("expect", {})
    results = expect.get("results")
    if results is not None and len(results) != len(step["message"]):
        where: NodePath = ("steps", i, "expect", "results")
        yield where, f"{len(results)} results for {len(step['message'])} calls"
    batches = expect.get("batches")
    if isinstance(batches, list):
        for j, batch in enumerate(batches):
            names = batch if isinstance(batch, list) else [batch]
            for name in names:
                if name not in known:
                    yield ("steps", i, "expect", "batches", j), f"unknown tool_use id {name!r}"
    yield from _event_id_problems(expect.get("events", {}), known, ("steps", i))
    for j, name in enumerate(step.get("interrupt", {}).get("after_started", [])):
        if name not in known:
            yield ("steps", i, "interrupt", "after_started", j), f"unknown tool_use id {name!r}"


def _event_id_problems(
    events: Mapping[str, Any], known: set[str], step: NodePath
) -> Iterator[tuple[NodePath, str]]:
    for key in ("before", "overlap"):
        for j, pair in enumerate(events.get(key, [])):
            for name in pair:
                if name not in known:
                    message = f"unknown tool_use id {name!r}; give the call an id to refer to it"
                    yield (*step, "expect", "events", key, j), message


def _walk(value: Any, path: NodePath) -> Iterator[tuple[NodePath, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


# -- building the values ----------------------------------------------------


def _build(located: Located, *, path: Path | None, area: str) -> Scenario:
    data: dict[str, Any] = located.data
    raw_setup: dict[str, Any] = data.get("setup", {})
    setup = Setup(
        env=dict(raw_setup.get("env", {})),
        settings=dict(raw_setup.get("settings", {})),
        prompt=raw_setup.get("prompt", "allow"),
        test_tools=raw_setup.get("test_tools", False),
        cwd=raw_setup.get("cwd"),
        files=tuple(
            _file_spec(name, spec, located.key_line(("setup", "files", name)))
            for name, spec in raw_setup.get("files", {}).items()
        ),
    )
    steps = tuple(
        _step(step, located.line_of(("steps", i))) for i, step in enumerate(data["steps"])
    )
    final = tuple(
        FinalFile(
            path=name,
            text=spec.get("text"),
            data=_b64(spec["b64"]) if "b64" in spec else None,
            contains=spec.get("contains"),
            absent=spec.get("absent", False),
            mode=_mode(spec.get("mode")),
            line=located.key_line(("final", "files", name)),
        )
        for name, spec in data.get("final", {}).get("files", {}).items()
    )
    return Scenario(
        id=data["id"],
        title=data["title"],
        spec=tuple(data["spec"]),
        level=data["level"],
        requires=tuple(data.get("requires", ())),
        setup=setup,
        steps=steps,
        final=final,
        description=data.get("description", ""),
        path=path,
        area=area,
    )


def _mode(text: str | None) -> int | None:
    return None if text is None else int(text, 8)


def _mtime(text: str | None) -> float | None:
    return None if text is None else parse_mtime(text)


def _file_spec(name: str, spec: Mapping[str, Any], line: int | None) -> FileSpec:
    kind = next(k for k in _FILE_KINDS if k in spec)
    return FileSpec(
        path=name,
        kind=kind,
        text=spec.get("text"),
        data=_b64(spec["b64"]) if kind == "b64" else None,
        target=spec.get("symlink"),
        size=spec.get("sparse"),
        mode=_mode(spec.get("mode")),
        mtime=_mtime(spec.get("mtime")),
        line=line,
    )


def _tool_use(raw: Mapping[str, Any]) -> ToolUse:
    return ToolUse(name=raw["name"], input=raw.get("input", {}), id=raw.get("id"))


def _step(raw: Mapping[str, Any], line: int | None) -> Step:
    if "call" in raw:
        return CallStep(call=_tool_use(raw["call"]), expect=raw.get("expect", {}), line=line)
    if "message" in raw:
        calls = tuple(_tool_use(c) for c in raw["message"])
        interrupt = raw.get("interrupt")
        return MessageStep(
            calls=calls,
            expect=raw.get("expect", {}),
            streaming=raw.get("streaming", False),
            block_delay_ms=raw.get("block_delay_ms"),
            interrupt_after=None if interrupt is None else tuple(interrupt["after_started"]),
            line=line,
        )
    if "session" in raw:
        return SessionStep(action=raw["session"], line=line)
    if "tools" in raw:
        return ToolsStep(expect=raw.get("expect", {}), line=line)
    if "raw" in raw:
        return RawStep(request=raw["raw"], expect=raw.get("expect", {}), line=line)
    fs: Mapping[str, Any] = raw["fs"]
    op = next(o for o in _FS_OPS if o in fs)
    return FsStep(
        op=op,
        path=fs[op],
        text=fs.get("text"),
        data=_b64(fs["b64"]) if "b64" in fs else None,
        target=fs.get("target"),
        mode=_mode(fs.get("mode")),
        mtime=_mtime(fs.get("mtime")),
        line=line,
    )
