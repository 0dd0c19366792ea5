"""Scenario files: the frozen values they load into, and the loader.

A scenario is one YAML file (format: ``schema/scenario.schema.json``, explained
in ``conformance/README.md``). The loader rejects a file with every problem
it finds, each naming the file, the line and the field; a file that loads is
guaranteed to be well-formed, so the runner never meets a malformed step.

Strings are kept exactly as written: placeholders such as ``{root}`` are
expanded by the runner, which alone knows the sandbox.

The step kinds are classes of ``conformance.suite.steps``, which also own each
kind's part of the loading; they are re-exported here.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import json
import os
import pickle
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from conformance.errors import Problem, ScenarioLoadError
from conformance.suite.steps import (
    CallStep,
    FsStep,
    MessageStep,
    RawStep,
    SessionStep,
    Step,
    ToolsStep,
    ToolUse,
    parse_step,
    step_class,
)
from conformance.suite.yamlsource import Located, NodePath, format_path, load_located
from conformance.suite.yamlvalues import decode_b64, parse_mode, parse_mtime

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError

__all__ = [
    "CACHE_ENV",
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

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "scenario.schema.json"
"""Where the scenario schema lives (shipped as package data)."""

Level: TypeAlias = Literal["MUST", "SHOULD", "MAY"]
FileKind: TypeAlias = Literal["text", "b64", "dir", "symlink", "fifo", "sparse"]

RawFilter: TypeAlias = Callable[[Any], bool]
"""A test of a scenario file's parsed YAML, made before validation: False skips the file."""

_FILE_KINDS: tuple[FileKind, ...] = ("text", "b64", "dir", "symlink", "fifo", "sparse")
MAX_REPEATED_BYTES: Final = 256 * 1024 * 1024
"""The largest file a ``repeat`` may make: big enough for any size gate, small enough for /tmp."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileSpec:
    """A file the runner creates in the sandbox before the session begins.

    ``text`` is still unexpanded; ``data`` holds the decoded bytes of ``b64``;
    ``mtime`` is an offset in seconds from the moment of creation; the file
    holds the text or the bytes ``repeat`` times over (at most
    ``MAX_REPEATED_BYTES`` in all, checked by the loader for ``b64`` and for
    the text as written, and by the sandbox once placeholders are expanded).
    """

    path: str
    kind: FileKind
    text: str | None = None
    data: bytes | None = None
    target: str | None = None
    size: int | None = None
    mode: int | None = None
    mtime: float | None = None
    repeat: int = 1
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
    host_paths: tuple[str, ...] = ()
    """Real host paths outside the sandbox the calls aim at (PROTO-ISOLATE-2)."""
    profiles: tuple[str, ...] = ()
    """PROFILE-SCENARIO-1: the profiles it holds under; empty means all."""
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
    import jsonschema  # noqa: PLC0415  (deferred: a cached scenario needs no validation)

    return jsonschema.Draft202012Validator(scenario_schema())


# -- the cache of validated scenarios -----------------------------------------
#
# Validating a scenario (YAML with line numbers, then the JSON Schema, then the
# semantic checks) costs about a millisecond; the whole suite, a second or more
# on every command that loads it. A scenario that loaded is pickled under a
# key of everything its loading depends on: the file's text, name and area,
# and the loader itself (every module of this package and the schema), so an
# edit to either misses the cache. A file with problems is never cached: its
# problems are found again each time.

CACHE_ENV = "TOOLCONF_SCENARIO_CACHE"
"""Where validated scenarios are cached (default ``$TOOLCONF_CACHE/scenarios`` or
``~/.cache/toolconf/scenarios``); ``0`` or ``off`` turns the cache off."""


_STALE_AFTER_S = 7 * 24 * 3600
"""A loader version's cache not written to for this long is removed."""


def _cache_dir() -> Path | None:
    """This loader version's directory of the cache, or None when the cache is off."""
    configured = os.environ.get(CACHE_ENV, "")
    if configured.lower() in ("0", "off", "no", "false"):
        return None
    if configured:
        base = Path(configured)
    else:
        home = os.environ.get("TOOLCONF_CACHE") or Path.home() / ".cache" / "toolconf"
        base = Path(home) / "scenarios"
    return base / _loader_fingerprint().hex()[:16]


@functools.cache
def _prune(directory: Path) -> None:
    """Once per process and version: remove other loader versions' stale directories."""
    now = time.time()
    with contextlib.suppress(OSError):
        for other in directory.parent.iterdir():
            if other != directory and other.is_dir():
                with contextlib.suppress(OSError):
                    if now - other.stat().st_mtime > _STALE_AFTER_S:
                        shutil.rmtree(other, ignore_errors=True)


@functools.cache
def _loader_fingerprint() -> bytes:
    # The loader's own layer and the wire layer beneath it decide what a file loads to.
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(SCHEMA_PATH.read_bytes())
    for module in sorted([*package.glob("suite/*.py"), *package.glob("wire/*.py")]):
        digest.update(module.parent.name.encode() + b"/" + module.name.encode() + b"\0")
        digest.update(module.read_bytes())
    return digest.digest()


def _cache_key(text: str, file: str, stem: str | None, path: Path | None, area: str) -> str:
    digest = hashlib.sha256(_loader_fingerprint())
    for part in (file, stem or "", str(path) if path else "", area, text):
        digest.update(b"\0" + part.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _cached(key: str) -> tuple[Scenario, Any] | None:
    directory = _cache_dir()
    if directory is None:
        return None
    try:
        blob = (directory / f"{key}.pickle").read_bytes()
        scenario, raw = pickle.loads(blob)
    except Exception:  # absent, unreadable or from another Python: load afresh
        return None
    return (scenario, raw) if isinstance(scenario, Scenario) else None


def _store(key: str, scenario: Scenario, raw: Any) -> None:
    """Cache a loaded scenario. Each writer writes a temporary file of its own and renames it
    into place, so writers at once (pytest-xdist workers, threads) never mix their bytes and
    a reader sees a whole entry or none."""
    directory = _cache_dir()
    if directory is None:
        return
    _prune(directory)
    target = directory / f"{key}.pickle"
    temporary: str | None = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        os.utime(directory)  # in use: not stale
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{key[:16]}-", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(pickle.dumps((scenario, raw), protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temporary, target)
    except OSError:  # a read-only home only costs the speed-up
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


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
    key = _cache_key(text, file, stem, path, area)
    hit = _cached(key)
    if hit is not None:
        scenario, raw = hit
        return scenario if keep is None or keep(raw) else None
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
    scenario = _build(located, path=path, area=area)
    _store(key, scenario, located.data)
    return scenario


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
    from jsonschema.exceptions import best_match  # noqa: PLC0415  (deferred, see _validator)

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
        if path and path[-1] == "b64" and isinstance(value, str) and decode_b64(value) is None:
            yield problem(path, "not valid base64")
    for name, spec in data.get("setup", {}).get("files", {}).items():
        yield from (
            problem(("setup", "files", name, "repeat"), message)
            for message in _repeat_problems(spec)
        )
    for i, step in enumerate(data["steps"]):
        checked = {"expect": step.get("expect", {}), "under": step.get("under", {})}
        for path, value in _walk(checked, ("steps", i)):
            if path[-1] == "regex" and isinstance(value, str):
                try:
                    re.compile(value)
                except re.error as exc:
                    yield problem(path, f"bad regular expression: {exc}")
        yield from (problem(("steps", i, *p), m) for p, m in step_class(step).problems(step))


def _repeat_problems(spec: Mapping[str, Any]) -> Iterator[str]:
    """A ``repeat`` needs text or b64, and the file it makes is at most MAX_REPEATED_BYTES."""
    if "repeat" not in spec:
        return
    if "text" in spec:
        unit = len(spec["text"].encode("utf-8", "surrogatepass"))
    elif "b64" in spec:
        unit = len(decode_b64(spec["b64"]) or b"")
    else:
        yield "repeat needs text or b64"
        return
    if unit * spec["repeat"] > MAX_REPEATED_BYTES:
        yield f"repeat makes {unit * spec['repeat']} bytes, more than {MAX_REPEATED_BYTES}"


def _walk(value: Any, path: NodePath) -> Iterator[tuple[NodePath, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))


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
        parse_step(step, located.line_of(("steps", i))) for i, step in enumerate(data["steps"])
    )
    final = tuple(
        FinalFile(
            path=name,
            text=spec.get("text"),
            data=decode_b64(spec["b64"]) if "b64" in spec else None,
            contains=spec.get("contains"),
            absent=spec.get("absent", False),
            mode=parse_mode(spec.get("mode")),
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
        host_paths=tuple(data.get("host_paths", ())),
        profiles=tuple(data.get("profiles", ())),
        setup=setup,
        steps=steps,
        final=final,
        description=data.get("description", ""),
        path=path,
        area=area,
    )


def _file_spec(name: str, spec: Mapping[str, Any], line: int | None) -> FileSpec:
    kind = next(k for k in _FILE_KINDS if k in spec)
    return FileSpec(
        path=name,
        kind=kind,
        text=spec.get("text"),
        data=decode_b64(spec["b64"]) if kind == "b64" else None,
        target=spec.get("symlink"),
        size=spec.get("sparse"),
        mode=parse_mode(spec.get("mode")),
        mtime=None if "mtime" not in spec else parse_mtime(spec["mtime"]),
        repeat=spec.get("repeat", 1),
        line=line,
    )
