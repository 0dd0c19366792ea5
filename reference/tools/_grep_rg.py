"""The ``rg`` Grep engine: ripgrep as a subprocess with a bounded run (GREP-ENGINE-1).

``rg`` runs with its JSON output, in the search directory, searching ``.`` (a
file: its parent, searching ``./NAME``), so that a ``--glob`` holding a
``/`` is anchored at the search directory whatever symlinks lead there. Its
options make its selection SPEC.md's (GREP-FILES-1): hidden files searched,
``.gitignore`` honoured outside a repository too (``--no-require-git``),
only the ignore files in the tree and its parents (no global gitignore, no
``.git/info/exclude``), no configuration file, no memory maps (a NUL past
the start of a mapped file goes unseen), version-control directories
excluded by globs given after the model's (the later glob wins). Then:

* a file whose ``end`` message reports a ``binary_offset`` held a NUL byte
  and is dropped whole (``rg`` quits such a file at the NUL, or, for a file
  named as the path, reports it as binary);
* when the output mode needs only files or counts (and not in multiline
  mode), ``rg`` answers with ``--files-with-matches`` or ``--count``, far
  cheaper than JSON for dense matches, and each file it names is read once
  to drop those holding a NUL byte (``rg`` stops at the first match before
  it can see a later NUL);
* when the model's ``glob`` whitelists files, what ``rg`` let it bring back
  past the ignore files or the ``type`` is dropped (``_grep_search``).

The run is bounded: ``rg`` is killed when the call is aborted or after
:data:`TIMEOUT_S` seconds.
"""

from __future__ import annotations

import base64
import json
import os
import posixpath
import re
import shutil
import subprocess
import time
from collections.abc import Mapping
from typing import Any, Final

from reference import errors
from reference.abort import AbortSignal
from reference.deadline import SEARCH_TIMEOUT_S, Deadline
from reference.tools._grep_python import read_text
from reference.tools._grep_search import (
    VCS_DIRECTORIES,
    FileHits,
    SearchRequest,
    Selection,
    unknown_type,
)

TIMEOUT_S: Final = SEARCH_TIMEOUT_S  # GREP-TIMEOUT-1
_COUNT_LINE: Final = re.compile(rb"(.*?)\x00(\d+)\n", re.DOTALL)
POLL_S: Final = 0.05


def executable() -> str | None:
    """GREP-ENGINE-1: ``rg`` on the engine's ``PATH``."""
    return shutil.which("rg")


def summarizes(request: SearchRequest) -> bool:
    """Whether rg can answer with ``--count`` or ``--files-with-matches`` instead of JSON.

    Only in line mode: in multiline mode ``--count`` counts matches, not the
    lines they touch (GREP-COUNT-1).
    """
    return request.wants != "lines" and not request.multiline


def arguments(rg: str, request: SearchRequest, target: str) -> list[str]:
    """The command line of one search of ``target`` (``.`` or ``./NAME``)."""
    args = [
        rg,
        "--no-config",
        "--hidden",
        "--no-require-git",
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
    args += [f"--glob={glob}" for glob in request.globs]
    args += [f"--glob=!{name}" for name in VCS_DIRECTORIES]
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
        hits = parse(stdout, cwd)
    if request.target_is_dir and request.globs:
        selection = Selection.build(request, cwd, lenient=True)
        if selection.whitelists:
            hits = [hit for hit in hits if selection.allows_found(hit.path)]
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


def parse(stdout: bytes, cwd: str) -> list[FileHits]:
    """The ``begin``/``match``/``context``/``end`` messages as hits, binary files dropped."""
    by_path: dict[str, dict[int, tuple[str, bool]]] = {}
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
        if text.endswith("\n"):
            text = text[:-1]
        for offset, line in enumerate(text.split("\n")):
            number = data["line_number"] + offset
            if kind == "match" or number not in lines:
                lines[number] = (line, kind == "match")
    return [
        FileHits(path, [(n, line, is_match) for n, (line, is_match) in sorted(lines.items())])
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
