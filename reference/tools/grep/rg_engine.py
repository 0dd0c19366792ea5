"""The ``rg`` Grep engine: ripgrep as a subprocess with a bounded run (GREP-ENGINE-1).

``rg`` runs with its JSON output, in the search directory, searching ``.`` (a
file: its parent, searching ``./NAME``), so that a ``--glob`` holding a
``/`` is anchored at the search directory whatever symlinks lead there. Its
options make its selection SPEC.md's (GREP-FILES-1): hidden files searched,
``.gitignore`` honoured inside a git repository only (ripgrep's default),
only the ignore files in the tree and its parents (no global gitignore, no
``.git/info/exclude``), no configuration file, no memory maps (a NUL past
the start of a mapped file goes unseen), version-control directories
excluded by globs given before the model's (the later glob wins, so the
model's can bring them back, as in Claude Code 2.1.88). Then:

* a file whose ``end`` message reports a ``binary_offset`` held a NUL byte
  and is dropped whole (``rg`` quits such a file at the NUL, or, for a file
  named as the path, reports it as binary);
* when the output mode needs only files or counts (and not in multiline
  mode), ``rg`` answers with ``--files-with-matches`` or ``--count``, far
  cheaper than JSON for dense matches, and each file it names is read once
  to drop those holding a NUL byte (``rg`` stops at the first match before
  it can see a later NUL).

The run is bounded: ``rg`` is killed when the call is aborted or after
:data:`TIMEOUT_S` seconds.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import posixpath
import re
import shutil
import subprocess
import sysconfig
import time
from collections.abc import Mapping
from typing import Any, Final

from reference import errors
from reference.abort import AbortSignal
from reference.deadline import SEARCH_TIMEOUT_S, Deadline
from reference.tools.grep.python_engine import read_text
from reference.tools.grep.search import (
    VCS_DIRECTORIES,
    FileHits,
    SearchRequest,
    unknown_type,
)

TIMEOUT_S: Final = SEARCH_TIMEOUT_S  # GREP-TIMEOUT-1
_COUNT_LINE: Final = re.compile(rb"(.*?)\x00(\d+)\n", re.DOTALL)
POLL_S: Final = 0.05


def executable() -> str | None:
    """GREP-ENGINE-1: ``rg`` beside the engine's interpreter, else on the engine's ``PATH``.

    The ``ripgrep`` wheel (the ``test`` and ``ripgrep`` extras) installs ``rg``
    in the environment's scripts directory, which is on ``PATH`` only in an
    activated venv: looking there first gives every platform, activated or
    not, the same pinned rg.
    """
    return _beside_interpreter() or shutil.which("rg")


@functools.cache
def _beside_interpreter() -> str | None:
    scripts = sysconfig.get_path("scripts")
    candidate = os.path.join(scripts, "rg.exe" if os.name == "nt" else "rg") if scripts else ""
    return candidate if candidate and os.access(candidate, os.X_OK) else None


def summarizes(request: SearchRequest) -> bool:
    """Whether rg can answer with ``--count`` or ``--files-with-matches`` instead of JSON.

    Only in line mode: in multiline mode ``--count`` does not count the lines
    a match starts on (GREP-COUNT-1); the JSON submatches give them.
    """
    return request.wants != "lines" and not request.multiline


def arguments(rg: str, request: SearchRequest, target: str) -> list[str]:
    """The command line of one search of ``target`` (``.`` or ``./NAME``)."""
    args = [
        rg,
        "--no-config",
        "--hidden",
        "--no-ignore-global",
        "--no-ignore-exclude",
        "--case-sensitive",
        "--no-mmap",  # a memory-mapped file is checked for NUL at its start only
    ]
    if not summarizes(request):
        args.append("--json")
    elif request.wants == "counts":
        args += ["--count", "--null", "--with-filename"]
    else:
        args += ["--files-with-matches", "--null"]
    if request.ignore_case:
        args.append("--ignore-case")
    if request.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if request.before:
        args.append(f"--before-context={request.before}")
    if request.after:
        args.append(f"--after-context={request.after}")
    # GREP-FILES-1: the model's globs come last, so they win (even over a VCS directory)
    args += [f"--glob=!{name}" for name in VCS_DIRECTORIES]
    args += [f"--glob={glob}" for glob in request.globs]
    if request.file_type is not None:
        args.append(f"--type={request.file_type}")
    args += [f"--regexp={request.pattern}", "--", target]
    return args


def search(request: SearchRequest, abort: AbortSignal, rg: str) -> list[FileHits]:
    """Every file with a match, in no particular order."""
    if request.target_is_dir:
        cwd, target = request.target, "."
    else:
        cwd, name = posixpath.split(request.target)
        target = "./" + name
        if not _is_regular(request.target):
            return []  # FILE-PATH-4: rg would block on a FIFO
    if request.file_type is not None and "\x00" in request.file_type:
        raise unknown_type(request.file_type)  # no argument holds a NUL
    stdout, stderr, status = _run(arguments(rg, request, target), cwd, abort)
    if status not in (0, 1):
        _raise_for(stderr, request)
    if summarizes(request):
        found = parse_summary(stdout, cwd, counts=request.wants == "counts")
        hits = [hit for hit in found if read_text(hit.path) is not None]  # GREP-FILES-1
    else:
        hits = parse(stdout, cwd, starts=request.multiline)
    return hits


def _is_regular(path: str) -> bool:
    try:
        return os.path.isfile(path)
    except OSError:
        return False


def _run(args: list[str], cwd: str, abort: AbortSignal) -> tuple[bytes, str, int]:
    """Run ``rg`` to its end, the abort or the timeout, whichever comes first."""
    try:
        process = subprocess.Popen(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise errors.RipgrepFailure(f"cannot run rg: {exc}") from exc
    deadline = time.monotonic() + TIMEOUT_S
    with process:
        while True:
            try:
                stdout, stderr = process.communicate(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                if abort.is_set() or time.monotonic() > deadline:
                    process.kill()
                    process.communicate()
                    if abort.is_set():
                        raise errors.CallAbortedError("aborted") from None
                    raise Deadline("Grep", TIMEOUT_S).expired() from None  # GREP-TIMEOUT-1
    return stdout, stderr.decode("utf-8", errors="replace"), process.returncode


def _raise_for(stderr: str, request: SearchRequest) -> None:
    """Status 2: a refused pattern, type or glob is the model's error; file errors are not."""
    if "regex parse error" in stderr or "is not allowed in a regex" in stderr:
        raise errors.InvalidPatternError(f"Invalid regex pattern: {stderr.strip()}")  # GREP-ERROR-1
    if "unrecognized file type" in stderr and request.file_type is not None:
        raise unknown_type(request.file_type)  # GREP-FILES-1
    if "error parsing glob" in stderr:
        raise errors.InvalidGlobError(stderr.strip())
    # Anything else (an unreadable file, a vanished directory) is per file: rg went on.


def parse(stdout: bytes, cwd: str, *, starts: bool = False) -> list[FileHits]:
    """The ``begin``/``match``/``context``/``end`` messages as hits, binary files dropped.

    With ``starts`` each file's ``count`` is the number of lines a submatch
    starts on (GREP-COUNT-1 in multiline mode).
    """
    by_path: dict[str, dict[int, tuple[str, bool]]] = {}
    started: dict[str, set[int]] = {}
    binary: set[str] = set()
    for raw in stdout.splitlines():
        message = json.loads(raw)
        kind = message.get("type")
        if kind not in ("match", "context", "end"):
            continue
        data = message["data"]
        path = _absolute(cwd, _path(data["path"]))
        if kind == "end":
            if data.get("binary_offset") is not None:
                binary.add(path)  # GREP-FILES-1: a file holding NUL is skipped
            continue
        lines = by_path.setdefault(path, {})
        text = _text(data["lines"])
        if kind == "match" and starts:
            encoded = text.encode("utf-8")
            first = data["line_number"]
            for submatch in data.get("submatches", []):
                before = encoded[: int(submatch["start"])]
                started.setdefault(path, set()).add(first + before.count(b"\n"))
        if text.endswith("\n"):
            text = text[:-1]
        for offset, line in enumerate(text.split("\n")):
            number = data["line_number"] + offset
            if kind == "match" or number not in lines:
                lines[number] = (line, kind == "match")
    return [
        FileHits(
            path,
            [(n, line, is_match) for n, (line, is_match) in sorted(lines.items())],
            count=len(started.get(path, ())) if starts else None,
        )
        for path, lines in by_path.items()
        if path not in binary and any(is_match for _, is_match in lines.values())
    ]


def parse_summary(stdout: bytes, cwd: str, *, counts: bool) -> list[FileHits]:
    """``--null`` output: ``PATH\\0COUNT\\n`` (``--count``) or ``PATH\\0`` (files)."""
    if not counts:
        return [FileHits(_absolute(cwd, os.fsdecode(p))) for p in stdout.split(b"\0") if p]
    return [
        FileHits(_absolute(cwd, os.fsdecode(path)), count=int(count))
        for path, count in _COUNT_LINE.findall(stdout)
    ]


def _text(field: Mapping[str, Any]) -> str:
    """An rg JSON ``{"text"}`` or ``{"bytes"}`` (base64, not UTF-8) field as text."""
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field["bytes"]).decode("utf-8", errors="replace")


def _path(field: Mapping[str, Any]) -> str:
    """An rg JSON path field as the file system's ``str`` (undecodable bytes escaped)."""
    if "text" in field:
        return str(field["text"])
    return os.fsdecode(base64.b64decode(field["bytes"]))


def _absolute(cwd: str, path: str) -> str:
    """The absolute form of an rg path (``./a/b``), joined without resolving symlinks."""
    return posixpath.join(cwd, path[2:] if path.startswith("./") else path)
