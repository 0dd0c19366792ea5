"""Checks the file tools share: path validity, the read record.

Their deny-rule check is :func:`reference.permissions.session_rules.matching_deny_rule`.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo

from reference import errors, fileio, paths, text
from reference.filestate import ReadRecord, Source, is_stale, modified_since
from reference.observer import Change
from reference.profiles import profile_of
from reference.tool import ToolUseContext


class StrictInput(BaseModel):
    """Every tool input: strict types, extra fields refused (TOOL-SCHEMA-1, DISP-SCHEMA-1)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


_DIGITS: Final = re.compile(r"-?[0-9]+")


def _integral(value: object) -> object:
    """JSON has one number type: 2.0 is the integer 2 (TOOL-SCHEMA-1)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _integral_or_digits(value: object, info: ValidationInfo) -> object:
    """As :func:`_integral`; and where the session's profile takes numbers given as
    strings, ``"5"`` is 5 (DISP-SCHEMA-1)."""
    if isinstance(value, str) and profile_of(info).numeric_strings and _DIGITS.fullmatch(value):
        return int(value)
    return _integral(value)


SYMLINK_REFUSAL: Final = (  # WRITE-ATOMIC-1 under claude-code-latest, as 2.1.332 wrote it
    "Refusing to write {path}: it is a symbolic link. Write to the link's target path "
    "instead: {target}."
)


def refuse_symlink(ctx: ToolUseContext, path: str) -> None:
    """WRITE-ATOMIC-1 where the session's profile does not write through a symbolic link:
    Write, Edit and NotebookEdit of a link are refused in call(), before anything is
    written or backed up, naming the link's resolved target."""
    if ctx.session.profile.write_through_symlinks or not os.path.islink(path):
        return
    target = os.path.realpath(path)
    raise errors.SymlinkWriteError(SYMLINK_REFUSAL.format(path=path, target=target))


def _integral_or_search_digits(value: object, info: ValidationInfo) -> object:
    """As :func:`_integral`; and where the session's profile takes ToolSearch's number given
    as a string, ``"2"`` is 2 (REG-SEARCH-1)."""
    lenient = profile_of(info).search_numeric_strings
    if isinstance(value, str) and lenient and _DIGITS.fullmatch(value):
        return int(value)
    return _integral(value)


JsonInt = Annotated[int, BeforeValidator(_integral)]
LenientJsonInt = Annotated[int, BeforeValidator(_integral_or_digits)]
SearchJsonInt = Annotated[int, BeforeValidator(_integral_or_search_digits)]
"""ToolSearch's ``max_results``: as :data:`JsonInt`, and a string of digits where the
session's profile takes one (REG-SEARCH-1); the schema stays integer."""
"""An integer input a profile's release also takes as a string of digits (DISP-SCHEMA-1,
measured on Read's ``offset`` and ``limit``); the schema stays integer."""


def _semantic(value: object) -> object:
    """EDIT-BOOL-1: the strings "true" and "false", exactly, are those booleans."""
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


SemanticBool = Annotated[bool, BeforeValidator(_semantic)]
"""A boolean field that also takes "true" and "false" (EDIT-BOOL-1); the schema stays boolean."""


def check_path_syntax(raw_path: str) -> None:
    """FILE-PATH-2 and FILE-PATH-3, before any file system access."""
    if paths.has_nul(raw_path):
        raise errors.InvalidPathError("The file path contains a NUL character.")
    if paths.is_unc(raw_path):
        raise errors.UncPathError("UNC paths are not supported: refusing to touch a network share.")


def named_path(ctx: ToolUseContext, given: str, expanded: str) -> str:
    """FILE-PATH-1 under the session's profile: the path a result names, the expanded one,
    or, where the profile's release names it so, the path as the call gave it."""
    return given if ctx.session.profile.result_paths_as_given else expanded


def current_text(path: str) -> str:
    """The file's full text as Read would record it (replacement on bad bytes)."""
    data = fileio.read_bytes(path)
    return text.decode(data, text.detect_encoding(data))


def record_is_stale(record: ReadRecord, mtime_ns: int) -> bool:
    """STATE-STALE-1 in ``validate_input``: the mtime alone decides, no text is read."""
    return modified_since(record, mtime_ns=mtime_ns)


def stale_at_validate(ctx: ToolUseContext, record: ReadRecord, path: str, mtime_ns: int) -> bool:
    """STATE-STALE-1 in Write's and Edit's ``validate_input`` under the session's profile.

    Documented: the mtime alone decides. Where the profile decides staleness by
    content (``claude-code-latest``), a later mtime is stale only when the text,
    line endings aside, differs from the record's.
    """
    if not record_is_stale(record, mtime_ns):
        return False
    if not ctx.session.profile.stale_by_content:
        return True
    return text.to_lf(current_text(path)) != text.to_lf(record.text)


def stale_in_call(ctx: ToolUseContext, record: ReadRecord, mtime_ns: int, current: str) -> bool:
    """STATE-STALE-1 in ``call()`` under the session's profile: a later mtime and other text
    (line endings aside where the profile decides staleness by content)."""
    if not is_stale(record, mtime_ns=mtime_ns, text=current):
        return False
    if not ctx.session.profile.stale_by_content:
        return True
    return text.to_lf(current) != text.to_lf(record.text)


MODIFIED_SINCE_READ = (
    "File has been modified since read, either by the user or by a linter. "
    "Read it again before attempting to write it."
)
NOT_READ_YET = "File has not been read yet. Read it first before writing to it."
UNEXPECTEDLY_MODIFIED = (
    "File has been unexpectedly modified. Read it again before attempting to write it."
)


def record_own_write(
    ctx: ToolUseContext,
    path: str,
    *,
    text: str,
    written: fileio.Stat,
    source: Source,
    change: Change,
) -> None:
    """After Write, Edit or NotebookEdit changed ``path``: the record and the notice.

    STATE-UPDATE-1: the new full text with the stat taken after the write, no
    range, not partial. WRITE-NOTIFY-1: the observers, then a ``file_changed``
    event. STATE-UPDATE-2: called only after the write, so a refused or failed
    call leaves the record as it was.
    """
    ctx.session.read_state.set(
        path,
        ReadRecord(
            text=text,
            mtime_ns=written.mtime_ns,
            size=written.size,
            offset=None,
            limit=None,
            partial=False,
            source=source,
        ),
    )
    ctx.session.notify(path, change)
    ctx.events.emit("file_changed", id=ctx.tool_use_id, path=path, change=change)
