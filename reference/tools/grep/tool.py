"""Grep: ripgrep's search over files, in three output modes (SPEC.md section 17.3).

Two engines give the same results (GREP-ENGINE-1): ``rg`` when it is on the
engine's ``PATH`` (``grep.rg_engine``), a pure-Python one otherwise
(``grep.python_engine``). The engine process's ``TOOLSYS_GREP_ENGINE`` picks one
(``rg``, ``python``; unset or ``auto``: ``rg`` when present) so that tests
and the conformance suite can run against both. It is read from the process
environment, as ``PATH`` is, not from the session's: it is a deployment
choice of this engine and changes no result.

Both engines return the matching files with their lines; this module drops
the files ``Read`` deny rules cover (PERM-FILTER-1), orders, formats and
pages them (GREP-FILESMODE-1, GREP-CONTENT-1, GREP-COUNT-1, GREP-PAGE-1).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from pydantic import Field

from reference import errors, fileio, paths
from reference.abort import AbortSignal
from reference.deadline import Deadline, within
from reference.permissions.checks import working_directories_check
from reference.profiles import Profile
from reference.tool import ResultContent, Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import JsonInt, StrictInput
from reference.tools.grep import python_engine, rg_engine
from reference.tools.grep.search import (
    FileHits,
    SearchRequest,
    split_globs,
)
from reference.tools.search_scope import (
    mtime_ns,
    newest_first,
    search_path_of,
    shown_filter,
    shown_path,
)

NAME: Final = "Grep"
ENGINE_ENV: Final = "TOOLSYS_GREP_ENGINE"
DEFAULT_HEAD_LIMIT: Final = 250  # GREP-PAGE-1
MAX_RESULT_CHARS: Final = 20_000  # TOOL-PROPS-1
NO_FILES: Final = "No files found"
NO_MATCHES: Final = "No matches found"
NO_ENTRIES: Final = "No entries at this offset"
OutputMode = Literal["content", "files_with_matches", "count"]
_WANTS: Final[dict[str, Literal["lines", "counts", "files"]]] = {
    "content": "lines",
    "count": "counts",
    "files_with_matches": "files",
}

__all__ = [
    "GREP_TOOL",
    "engine_name",
]


class GrepInput(StrictInput):
    pattern: str = Field(description="The regular expression to search for (ripgrep syntax)")
    path: str | None = Field(
        default=None, description="File or directory to search; the current directory if omitted"
    )
    glob: str | None = Field(
        default=None, description="Globs filtering the files searched, e.g. '*.js' or '*.{ts,tsx}'"
    )
    type: str | None = Field(default=None, description="A ripgrep file type, e.g. py, js, rust")
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description="content: matching lines; files_with_matches: file paths; count: counts",
    )
    ignore_case: bool = Field(default=False, alias="-i", description="Case-insensitive search")
    line_numbers: bool = Field(
        default=True, alias="-n", description="Show line numbers (content mode)"
    )
    after: JsonInt | None = Field(
        default=None, ge=0, alias="-A", description="Lines after each match (content mode)"
    )
    before: JsonInt | None = Field(
        default=None, ge=0, alias="-B", description="Lines before each match (content mode)"
    )
    context: JsonInt | None = Field(
        default=None, ge=0, alias="-C", description="Lines before and after each match"
    )
    head_limit: JsonInt = Field(
        default=DEFAULT_HEAD_LIMIT, ge=0, description="Keep the first N entries (0: all)"
    )
    offset: JsonInt = Field(default=0, ge=0, description="Skip the first N entries")
    multiline: bool = Field(default=False, description="Let matches span lines ('.' matches \\n)")


def validate_input(inp: GrepInput, ctx: ToolUseContext) -> None:
    """GREP-VALIDATE-1: the table of SPEC.md 17.3, in order."""
    if any(
        value is not None and paths.has_nul(value) for value in (inp.pattern, inp.path, inp.glob)
    ):
        raise errors.InvalidPathError("Pattern, path and glob must not contain NUL characters.")
    if inp.path is None:
        return
    if paths.is_unc(inp.path):  # FILE-PATH-3
        raise errors.UncPathError("UNC paths are not supported: refusing to touch a network share.")
    path = ctx.expand(inp.path)
    if not os.path.lexists(path):
        raise errors.PathDoesNotExistError(
            f"Path does not exist: {path}. Note: your current working directory is {ctx.cwd}."
        )


def engine_name() -> Literal["rg", "python"]:
    """GREP-ENGINE-1: ``rg`` when on the engine's PATH, unless ``TOOLSYS_GREP_ENGINE`` says.

    Raises:
        EngineError: ``TOOLSYS_GREP_ENGINE=rg`` without ``rg``, or an unknown value.
    """
    choice = os.environ.get(ENGINE_ENV, "").strip().lower() or "auto"
    if choice == "python":
        return "python"
    if choice not in ("rg", "auto"):
        raise errors.EngineError(f"{ENGINE_ENV} must be rg, python or auto, not {choice!r}")
    if rg_engine.executable() is not None:
        return "rg"
    if choice == "rg":
        raise errors.EngineError(f"{ENGINE_ENV}=rg but rg is not on the engine's PATH")
    return "python"


def run_search(request: SearchRequest, abort: AbortSignal, deadline: Deadline) -> list[FileHits]:
    """GREP-ENGINE-1: the selected engine's hits (GREP-TIMEOUT-1: the Python one's within
    ``deadline``; ``rg`` keeps its own limit of the same length)."""
    if engine_name() == "rg":
        rg = rg_engine.executable()
        if rg is not None:
            return rg_engine.search(request, abort, rg)
    return python_engine.search(request, abort, deadline)


def call(inp: GrepInput, ctx: ToolUseContext) -> ToolResult:
    target = ctx.cwd if inp.path is None else ctx.expand(inp.path)
    content_mode = inp.output_mode == "content"
    request = SearchRequest(
        pattern=inp.pattern,
        target=target,
        target_is_dir=fileio.stat(target).kind is fileio.FileKind.DIRECTORY,
        top=ctx.session.root,
        globs=split_globs(inp.glob),
        file_type=inp.type,
        ignore_case=inp.ignore_case,
        multiline=inp.multiline,
        # GREP-CONTENT-1: -C, when given, both sides; else -A and -B
        before=_side(inp.context, inp.before) if content_mode else 0,
        after=_side(inp.context, inp.after) if content_mode else 0,
        wants=_WANTS[inp.output_mode],
    )
    shown = shown_filter(ctx.session)
    deadline = Deadline(NAME)  # GREP-TIMEOUT-1: one limit for the search and what follows
    try:
        found = run_search(request, ctx.abort, deadline)
    except errors.UnknownFileTypeError:
        found = []  # GREP-FILES-1: an unknown type finds nothing, as ripgrep's error does
    except errors.InvalidPatternError:
        if ctx.session.profile.grep_invalid_pattern_errs:
            raise  # GREP-ERROR-1
        found = []  # GREP-ERROR-1 where the profile's release finds nothing instead
    hits = [hit for hit in found if shown(hit.path)]  # PERM-FILTER-1
    relative = ctx.session.profile.grep_paths_relative

    def named(path: str) -> str:  # GREP-OUTPUT-1
        return shown_path(path, ctx.cwd, relative=relative)

    shape = ctx.session.profile.grep_output  # GREP-OUTPUT-1
    if inp.output_mode == "files_with_matches":
        return ToolResult(_shaped(_files_output(inp, hits, named), shape))
    alone = not request.target_is_dir  # GREP-CONTENT-1, GREP-COUNT-1: no path for a file alone
    if content_mode and alone and not hits:
        # GREP-FILES-1: a binary file named as path
        notice = within(deadline, lambda: _binary_match(request, deadline))
        if notice is not None:
            return ToolResult(_output("content", content=notice, numLines=1))
    if content_mode:
        context = request.before + request.after > 0
        output = _content_output(inp, hits, named, context=context, alone=alone)
        return ToolResult(_shaped(output, shape))
    return ToolResult(_shaped(_count_output(inp, hits, named, alone=alone), shape))


_RELEASE_FIELDS: Final = {
    "files_with_matches": ("mode", "filenames", "numFiles"),
    "content": ("mode", "numFiles", "filenames", "content", "numLines"),
    "count": ("mode", "numFiles", "filenames", "content", "numMatches"),
}
"""GREP-OUTPUT-1 as the releases give it: the fields of each mode, in their order."""


def _shaped(output: dict[str, Any], shape: str) -> dict[str, Any]:
    """GREP-OUTPUT-1: ``output`` with every field, or only the mode's as the releases give it
    (``numFiles`` 0 and ``filenames`` empty where the mode has none, the pagination when set)."""
    if shape != "release":
        return output
    filled = {**output, "numFiles": output["numFiles"] or 0, "filenames": output["filenames"] or []}
    out = {key: filled[key] for key in _RELEASE_FIELDS[output["mode"]]}
    for key in ("appliedLimit", "appliedOffset"):
        if output[key] is not None:
            out[key] = output[key]
    return out


def _binary_match(request: SearchRequest, deadline: Deadline) -> str | None:
    """GREP-FILES-1: ripgrep's notice for a file searched alone that holds NUL and matches.

    The NUL bytes count as line ends; None when the file holds none or nothing matches.
    Each line is searched within ``deadline`` (GREP-TIMEOUT-1).
    """
    try:
        data = fileio.read_bytes(request.target)
    except OSError:
        return None
    offset = data.find(b"\x00")
    if offset < 0:
        return None
    regex = python_engine.compile_regex(request)
    lines = data.replace(b"\x00", b"\n").decode("utf-8", errors="replace").split("\n")
    if not any(deadline.search(regex, line) for line in lines):
        return None
    return f'binary file matches (found "\\0" byte around offset {offset})'


def _side(context: int | None, side: int | None) -> int:
    """GREP-CONTENT-1: ``-C`` wins over ``-A``/``-B`` when given, even as 0 (as 2.1.88)."""
    if context is not None:
        return context
    return side or 0


def _page(entries: list[Any], inp: GrepInput) -> tuple[list[Any], dict[str, int | None]]:
    """GREP-PAGE-1: skip ``offset``, keep ``head_limit`` (0: all).

    ``appliedLimit`` is the limit when it left entries out, ``appliedOffset``
    the offset when it is not 0 and there were entries to skip.
    """
    rest = entries[inp.offset :]
    kept = rest if inp.head_limit == 0 else rest[: inp.head_limit]
    return kept, {
        "appliedLimit": inp.head_limit if len(kept) < len(rest) else None,
        "appliedOffset": inp.offset if inp.offset and entries else None,
    }


def _output(mode: OutputMode, **fields: Any) -> dict[str, Any]:
    """GREP-OUTPUT-1: every field present, null where it does not apply."""
    empty = dict.fromkeys(
        ("numFiles", "filenames", "content", "numLines", "numMatches", "appliedLimit")
    )
    return {"mode": mode, **empty, "appliedOffset": None, **fields}


def _files_output(
    inp: GrepInput, hits: list[FileHits], named: Callable[[str], str]
) -> dict[str, Any]:
    """GREP-FILESMODE-1: newest first, ties by path."""
    files = newest_first((hit.path, mtime_ns(hit.path)) for hit in hits)
    kept, applied = _page(files, inp)
    shown = [named(path) for path in kept]
    return _output("files_with_matches", numFiles=len(kept), filenames=shown, **applied)


def _content_output(
    inp: GrepInput,
    hits: list[FileHits],
    named: Callable[[str], str],
    *,
    context: bool,
    alone: bool,
) -> dict[str, Any]:
    """GREP-CONTENT-1: files in path order, ``--`` between groups of non-adjacent lines.

    A file searched ``alone`` (``path`` names it) is shown without its path.
    """
    lines: list[str] = []
    for hit in sorted(hits, key=lambda h: h.path):
        previous: int | None = None
        for number, text, is_match in hit.lines:
            if context and lines and (previous is None or number != previous + 1):
                lines.append("--")
            mark = ":" if is_match else "-"
            numbered = f"{number}{mark}" if inp.line_numbers else ""
            shown = named(hit.path) if is_match else hit.path  # GREP-OUTPUT-1
            prefix = "" if alone else f"{shown}{mark}"
            lines.append(f"{prefix}{numbered}{text}")
            previous = number
    kept, applied = _page(lines, inp)
    return _output("content", content="\n".join(kept), numLines=len(kept), **applied)


def _count_output(
    inp: GrepInput, hits: list[FileHits], named: Callable[[str], str], *, alone: bool
) -> dict[str, Any]:
    """GREP-COUNT-1: ``PATH:N`` in path order (``N`` for a file alone); totals of those kept."""
    counts = sorted((hit.path, hit.matching_lines) for hit in hits)
    kept, applied = _page(counts, inp)
    return _output(
        "count",
        numFiles=len(kept),
        content="\n".join(
            str(count) if alone else f"{named(path)}:{count}" for path, count in kept
        ),
        numMatches=sum(count for _, count in kept),
        **applied,
    )


_PATH_COUNT: Final = re.compile(r".+:[0-9]+\Z")
"""GREP-COUNT-1: a count entry that names its file, ``PATH:N``."""


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    """GREP-FILESMODE-1, GREP-CONTENT-1, GREP-COUNT-1, GREP-PAGE-1: the model's text."""
    mode = data["mode"]
    limit, offset = data.get("appliedLimit"), data.get("appliedOffset")
    parts = ([f"limit: {limit}"] if limit is not None else []) + (
        [f"offset: {offset}"] if offset is not None else []
    )
    pagination = ", ".join(parts)
    kept = data["numLines"] if mode == "content" else data["numFiles"]
    if kept == 0 and offset is not None and profile.grep_past_end_notice:
        return NO_ENTRIES  # GREP-PAGE-1: an offset past the end (a Decision)
    if mode == "files_with_matches":
        if kept == 0:
            return NO_FILES
        header = f"Found {_plural(kept, 'file')}" + (f" {pagination}" if pagination else "")
        return header + "\n" + "\n".join(data["filenames"])
    if mode == "content":
        text = data["content"] if kept else NO_MATCHES
        if pagination:
            text += f"\n\n[Showing results with pagination = {pagination}]"
        return text
    total = data["numMatches"]
    body = data["content"] if kept else NO_MATCHES
    if not profile.grep_count_totals_alone:  # GREP-COUNT-1: the totals of PATH:N lines only
        entries = [line for line in data["content"].split("\n") if _PATH_COUNT.match(line)]
        kept = len(entries)
        total = sum(int(line.rsplit(":", 1)[1]) for line in entries)
    text = f"{body}\n\nFound {_plural(total, 'total occurrence')} across {_plural(kept, 'file')}."
    return text + (f" with pagination = {pagination}" if pagination else "")


GREP_TOOL: Final[Tool[GrepInput]] = build_tool(
    name=NAME,
    input_model=GrepInput,
    call=call,
    validate_input=validate_input,
    description=(
        "A search tool built on ripgrep. Supports full regex syntax, filters files with "
        "glob or type, and shows matching files (default), matching lines or counts."
    ),
    error_codes={
        errors.InvalidPathError: 1,
        errors.UncPathError: 2,
        errors.PathDoesNotExistError: 3,
    },
    is_concurrency_safe=lambda _inp: True,  # TOOL-PROPS-1
    is_read_only=lambda _inp: True,
    map_result=map_result,
    max_result_size_chars=MAX_RESULT_CHARS,  # RES-PERSIST-1
    path_fields=("path",),
    get_path=search_path_of,
    path_rules="read",  # PERM-RULE-2: Read rules govern Grep
    classifier_input=lambda inp: inp.pattern,
    check_permissions=working_directories_check(search_path_of),  # PERM-READ-1
)
