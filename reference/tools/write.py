"""Write: whole-file replacement behind the read-before-write gate (SPEC.md, section 13)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from pydantic import Field

from reference import errors, fileio, history, text
from reference.filestate import ReadRecord
from reference.patch import structured_patch
from reference.permissions.session_rules import edit_rule_tools, matching_deny_rule
from reference.permissions.tool_paths import file_path_of
from reference.profiles import STATE_NOTE, Profile
from reference.tool import ResultContent, Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import (
    MODIFIED_SINCE_READ,
    NOT_READ_YET,
    UNEXPECTEDLY_MODIFIED,
    StrictInput,
    check_path_syntax,
    named_path,
    record_own_write,
    refuse_symlink,
    stale_at_validate,
    stale_in_call,
)
from reference.tools.read import tool as read

NAME: Final = "Write"


class WriteInput(StrictInput):
    file_path: str = Field(description="The absolute path to the file to write")
    content: str = Field(description="The content to write to the file")


def is_destructive(inp: WriteInput) -> bool:
    """TOOL-PROPS-1: overwriting an existing file is destructive.

    The predicate sees no context, so a path it cannot place (relative, ``~``)
    counts as destructive: the fail-closed answer.
    """
    return not os.path.isabs(inp.file_path) or os.path.lexists(inp.file_path)


def validate_input(inp: WriteInput, ctx: ToolUseContext) -> None:
    """WRITE-VALIDATE-1: the table of SPEC.md section 13, in order."""
    check_path_syntax(inp.file_path)
    path = ctx.expand(inp.file_path)
    rule = matching_deny_rule(ctx.session, path, edit_rule_tools(ctx.session, path))
    if rule is not None:
        raise errors.WriteDeniedError(
            f"File is covered by a deny rule in your permission settings ({rule.text}) "
            "and cannot be written."
        )
    st = fileio.stat(path)
    if st.kind is fileio.FileKind.MISSING:
        return  # WRITE-NEW-1: a new file needs no read
    if st.kind is not fileio.FileKind.REGULAR:
        raise errors.NotARegularFileError(f"Cannot write {path}: it is not a regular file.")
    record = ctx.session.read_state.get(path)
    if _read_missing(ctx, path, record):  # WRITE-READ-1
        raise errors.FileNotReadError(NOT_READ_YET)
    if record is not None and stale_at_validate(ctx, record, path, st.mtime_ns):
        raise errors.FileModifiedSinceReadError(MODIFIED_SINCE_READ)  # STATE-STALE-2, first


def _read_missing(ctx: ToolUseContext, path: str, record: ReadRecord | None) -> bool:
    """WRITE-READ-1 under the session's profile: the existing file lacks the record it needs.

    Documented: a record that is not partial. ``any``: any record. ``unread-text``:
    none for a file Read would show as text; a full one for an image, PDF or notebook.
    """
    needs = ctx.session.read_rules[0]
    if needs == "unread-text" and _shown_as_text(path):
        return False
    if record is None:
        return True
    return record.partial and needs != "any"


def _shown_as_text(path: str) -> bool:
    """IMG-DETECT-1's answer for ``path`` is text (not an image, a PDF or a notebook)."""
    head = fileio.read_head(path, read.HEAD_BYTES)
    return read.detect_kind(path, head)[0] is read.Kind.TEXT


UNDECODABLE_REFUSAL: Final = (  # WRITE-CONTENT-1 under claude-code-latest, as 2.1.332 wrote it
    "File is not valid UTF-8: it uses a legacy encoding such as Windows-1252, Shift-JIS or "
    "GBK, or it is binary. These tools write UTF-8 (or UTF-16LE behind its byte-order mark) "
    "and never convert a file's encoding on their own, so nothing was written. If the file "
    "is text, make the change with a shell command that reads and writes it in its own "
    "encoding (iconv, or PowerShell Get-Content/Set-Content -Encoding), or ask the user "
    "whether to convert it to UTF-8 first. To replace the whole file with new UTF-8 text "
    "anyway, delete it first, then Write it."
)


def _refuse_undecodable(data: bytes, encoding: text.Encoding) -> None:
    """WRITE-CONTENT-1 where the session's profile keeps a file it cannot decode: an
    existing file whose bytes are not valid in its encoding (TEXT-ENC-1) is not replaced."""
    try:
        text.decode(data, encoding, strict=True)
    except UnicodeDecodeError:
        raise errors.UndecodableFileWriteError(UNDECODABLE_REFUSAL) from None


def call(inp: WriteInput, ctx: ToolUseContext) -> ToolResult:
    """WRITE-SEQ-1: mkdir, backup, then the critical section: re-check and write."""
    path = ctx.expand(inp.file_path)
    refuse_symlink(ctx, path)  # WRITE-ATOMIC-1, under a profile that refuses links
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if fileio.stat(path).kind is fileio.FileKind.REGULAR:
        history.backup(ctx.session.session_dir, fileio.read_bytes(path))  # HIST-1

    # --- critical section: nothing between this re-check and the write ---
    with fileio.write_lock(path):  # STATE-LOCK-1: one writer at a time, across processes
        st = fileio.stat(path)
        original: str | None = None
        encoding = text.Encoding.UTF8  # WRITE-ENC-1: a new file is UTF-8 without BOM
        if st.kind is fileio.FileKind.REGULAR:
            data = fileio.read_bytes(path)
            encoding = text.detect_encoding(data)
            if not ctx.session.profile.write_over_undecodable:
                _refuse_undecodable(data, encoding)  # WRITE-CONTENT-1, the profile's
            original = text.decode(data, encoding)
            record = ctx.session.read_state.get(path)
            stale = _read_missing(ctx, path, record) or (  # WRITE-READ-1
                record is not None and stale_in_call(ctx, record, st.mtime_ns, original)
            )
            if stale:  # STATE-STALE-2, second check
                raise errors.FileUnexpectedlyModifiedError(UNEXPECTEDLY_MODIFIED)
        elif st.kind is not fileio.FileKind.MISSING:
            raise errors.FileVanishedError(f"{path} is no longer a regular file.")
        # WRITE-CONTENT-1: trailing spaces and tabs dropped, except in Markdown;
        # WRITE-EOL-1: no line-ending inheritance.
        content = inp.content
        if not text.keeps_trailing_whitespace(path):
            content = text.strip_trailing_whitespace(content)
        # WRITE-ENC-1: the file's encoding, without its byte order mark (kept under a
        # profile whose release keeps it).
        bom = bool(encoding.bom) and ctx.session.profile.write_keeps_bom  # TEXT-ENC-1: by the mark
        written = fileio.atomic_write(
            path,
            text.encode(content, encoding, bom=bom),
            clean_killed=ctx.session.profile.killed_writer_cleanup,
        )
    # --- end of critical section ---

    record_own_write(  # WRITE-STATE-1, WRITE-NOTIFY-1
        ctx,
        path,
        text=content,
        written=written,
        source="write",
        change="created" if original is None else "changed",
    )
    return ToolResult(  # WRITE-RESULT-1
        data={
            "type": "create" if original is None else "update",
            "filePath": named_path(ctx, inp.file_path, path),  # FILE-PATH-1
            "content": content,
            # WRITE-RESULT-1: a create has no patch, as Claude Code 2.1.88 answers
            "structuredPatch": [] if original is None else structured_patch(original, content),
            "originalFile": original,
            # WRITE-RESULT-1 under claude-code-latest: 2.1.332's output has userModified,
            # and its text the note (map_result reads the one from the other)
            **({"userModified": False} if ctx.session.profile.write_state_note else {}),
        }
    )


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    """WRITE-RESULT-1: the text the model sees."""
    if data["type"] == "create":
        message = f"File created successfully at: {data['filePath']}"
    else:
        message = f"The file {data['filePath']} has been updated successfully."
    return message + STATE_NOTE if "userModified" in data else message


WRITE_TOOL: Final[Tool[WriteInput]] = build_tool(
    name=NAME,
    input_model=WriteInput,
    call=call,
    validate_input=validate_input,
    description="Writes a file to the local filesystem, replacing it whole.",
    error_codes={
        errors.WriteDeniedError: 1,
        errors.FileNotReadError: 2,
        errors.FileModifiedSinceReadError: 3,
        errors.InvalidPathError: 4,
        errors.UncPathError: 5,
        errors.NotARegularFileError: 6,
    },
    map_result=map_result,
    is_destructive=is_destructive,
    path_fields=("file_path",),
    get_path=file_path_of,
    path_rules="edit",
    classifier_input=lambda inp: inp.file_path,
)
