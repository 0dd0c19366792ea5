"""Faults of the newer tools and of hooks, results and modes, where they fail silently.

Images, PDFs, notebooks, Glob, Grep and Bash, plus the hook protocol, result
persistence and the permission record. Most are process patches (a module
constant or helper rebound in the mutant's own adapter process, see
:mod:`conformance.instruments.mutants.process_patches`); those that only change one
session (its read-file state, its mode) are session faults. A survivor is a
hole in the scenarios: add the scenario, never weaken the mutant.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from conformance.instruments.mutants.base import (
    MutantEngine,
    process_patch,
    rebind,
    session_fault,
    set_global,
    wrap_tool,
)
from reference import dispatch, gitignore, hook_matcher, hooks
from reference.filestate import ReadFileState, ReadRecord
from reference.permissions import decision
from reference.tools import bash, glob, notebook_edit
from reference.tools.grep import rg_engine
from reference.tools.grep import search as grep_search
from reference.tools.read import image as read_image
from reference.tools.read import pdf as read_pdf

# -- images, PDFs, notebooks ---------------------------------------------------------


@process_patch(
    "image-not-resized",
    "Read sends an image larger than 2000x2000 at its own size",
    breaks=("IMG-RESIZE-1",),
)
def _image_not_resized() -> None:
    set_global(read_image, "MAX_SIDE", sys.maxsize)


@process_patch(
    "pdf-pages-limit-ignored",
    "Read accepts a PDF page range of any length, not at most 20 pages",
    breaks=("PDF-PAGES-2",),
)
def _pdf_pages_limit_ignored() -> None:
    set_global(read_pdf, "MAX_PAGES_PER_CALL", sys.maxsize)


class _NotebookReadsForgotten(ReadFileState):
    def set(self, path: str, record: ReadRecord) -> None:
        if not (record.source == "read" and path.lower().endswith(".ipynb")):
            super().set(path, record)


@session_fault(
    "notebook-read-not-recorded",
    "Reading a notebook leaves no read-file record, so NotebookEdit and dedup never see it",
    breaks=("NB-STATE-1",),
)
def _notebook_read_not_recorded(engine: MutantEngine) -> None:
    engine.live_session.read_state = _NotebookReadsForgotten()


def _never_stale(*args: object, **kwargs: object) -> bool:
    return False


@process_patch(
    "notebook-edit-no-staleness-check",
    "NotebookEdit never finds its read record stale: it overwrites external changes",
    breaks=("NBEDIT-VALIDATE-1", "STATE-STALE-1", "STATE-STALE-2"),
)
def _notebook_edit_no_staleness_check() -> None:
    set_global(notebook_edit, "record_is_stale", _never_stale)
    set_global(notebook_edit, "is_stale", _never_stale)


# -- Glob and Grep ---------------------------------------------------------------------


@process_patch(
    "glob-not-sorted-by-mtime",
    "Glob lists its matches by path, not oldest first",
    breaks=("GLOB-SORT-1",),
)
def _glob_not_sorted_by_mtime() -> None:
    def by_path(found: Iterable[tuple[str, int]]) -> list[str]:
        return sorted(path for path, _ in found)

    set_global(glob, "oldest_first", by_path)


@process_patch(
    "glob-cap-ignored",
    "Glob returns every match instead of the oldest 100 with the truncation note",
    breaks=("GLOB-SORT-1",),
)
def _glob_cap_ignored() -> None:
    set_global(glob, "MAX_RESULTS", sys.maxsize)


@process_patch(
    "grep-ignores-gitignore",
    "Grep searches files a .gitignore excludes (both engines)",
    breaks=("GREP-FILES-1",),
)
def _grep_ignores_gitignore() -> None:
    without = tuple(name for name in gitignore.GREP_IGNORE_FILES if name != gitignore.GITIGNORE)
    set_global(grep_search, "GREP_IGNORE_FILES", without)
    original = rg_engine.arguments

    def arguments(rg: str, request: Any, target: str) -> list[str]:
        args = original(rg, request, target)
        return [args[0], "--no-ignore-vcs", *args[1:]]

    rebind(original, arguments)


# -- Bash --------------------------------------------------------------------------------


@process_patch(
    "bash-cwd-not-carried",
    "A Bash cd is forgotten when the command ends: later commands start where it began",
    breaks=("BASH-CWD-1",),
)
def _bash_cwd_not_carried() -> None:
    set_global(bash, "_cwd_outcome", lambda shell_cwd, ctx: (None, ""))


@process_patch(
    "bash-timeout-not-clamped",
    "Bash runs a command with the timeout it asked for, above the ceiling",
    breaks=("BASH-TIMEOUT-1",),
)
def _bash_timeout_not_clamped() -> None:
    original = bash.timeout_ms

    def timeout_ms(requested: int | None, env: Mapping[str, str]) -> int:
        return original(None, env) if requested is None else requested

    rebind(original, timeout_ms)


def _no_cascade(_inp: Any, _exc: BaseException) -> str | None:
    return None


@session_fault(
    "bash-no-cascade",
    "A failed Bash call does not cancel the rest of its concurrent batch",
    breaks=("SCHED-CASCADE-1",),
)
def _bash_no_cascade(engine: MutantEngine) -> None:
    wrap_tool(engine, "Bash", "cascade_description", lambda _own: _no_cascade)


# -- hooks -------------------------------------------------------------------------------


class _ExitTwoIsAnError(hooks.HookRun):
    """Exit code 2 is one more non-blocking error; its stdout JSON is honoured."""

    @property
    def blocking(self) -> bool:
        return False


@process_patch(
    "hook-exit-2-not-blocking",
    "A hook's exit code 2 is a non-blocking error: the call goes on",
    breaks=("HOOK-EXIT-1", "HOOK-BLOCK-1"),
)
def _hook_exit_2_not_blocking() -> None:
    rebind(hooks.HookRun, _ExitTwoIsAnError)


@process_patch(
    "hook-matcher-anchored",
    "A regular-expression hook matcher must match the whole tool name",
    breaks=("HOOK-MATCH-1",),
)
def _hook_matcher_anchored() -> None:
    original = hook_matcher.matcher_matches

    def matcher_matches(matcher: object, tool_name: str) -> bool:
        if not isinstance(matcher, str) or matcher in ("", "*"):
            return original(matcher, tool_name)
        if hook_matcher._EXACT_LIST.fullmatch(matcher):
            return original(matcher, tool_name)
        try:
            return re.fullmatch(matcher, tool_name) is not None
        except re.error:
            return False

    rebind(original, matcher_matches)


# -- results, modes and the permission record ----------------------------------------------


@process_patch(
    "persistence-skipped",
    "A result over the tool's size limit reaches the model whole, never persisted",
    breaks=("RES-PERSIST-1",),
)
def _persistence_skipped() -> None:
    set_global(dispatch, "size_of", lambda content: 0)


@session_fault(
    "dont-ask-prompts",
    "dontAsk is taken as default: a final ask prompts the user instead of denying",
    breaks=("PERM-MODE-5",),
)
def _dont_ask_prompts(engine: MutantEngine) -> None:
    session = engine.live_session
    if session.permission_mode == "dontAsk":
        session.permission_mode = "default"


@process_patch(
    "permission-source-misrecorded",
    "An allow by a localSettings rule is recorded as user_temporary, a session rule's as "
    "user_permanent",
    breaks=("PERM-RECORD-1",),
)
def _permission_source_misrecorded() -> None:
    set_global(decision, "_TEMPORARY_SOURCES", frozenset({"localSettings"}))
    set_global(decision, "_PERMANENT_SOURCES", frozenset({"session", "userSettings"}))
