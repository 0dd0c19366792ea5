"""Edit: exact string replacement behind the read-before-write gate (SPEC.md, section 14)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

from pydantic import Field

from reference import errors, fileio, history, paths, text
from reference.patch import structured_patch
from reference.permissions.session_rules import edit_rule_tools, matching_deny_rule
from reference.permissions.tool_paths import file_path_of
from reference.profiles import STALE_EDIT_NOTE, STATE_NOTE, Profile
from reference.tool import ResultContent, Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import (
    MODIFIED_SINCE_READ,
    NOT_READ_YET,
    UNEXPECTEDLY_MODIFIED,
    SemanticBool,
    StrictInput,
    check_path_syntax,
    current_text,
    named_path,
    record_own_write,
    refuse_symlink,
    stale_at_validate,
    stale_in_call,
)
from reference.tools.edit_plan import apply_to_original, normalize_new_string, plan_edit

NAME: Final = "Edit"
MAX_EDIT_BYTES: Final = 1024**3  # EDIT-VALIDATE-1 code 10: 1 GiB


class EditInput(StrictInput):
    file_path: str = Field(description="The absolute path to the file to modify")
    old_string: str = Field(description="The text to replace")
    new_string: str = Field(description="The text to replace it with")
    replace_all: SemanticBool = Field(default=False, description="Replace all occurrences")


def validate_input(inp: EditInput, ctx: ToolUseContext) -> None:
    """EDIT-VALIDATE-1: the table of SPEC.md section 14, in order."""
    if inp.old_string == inp.new_string:
        raise errors.NoChangesError(
            "No changes to make: old_string and new_string are exactly the same."
        )
    check_path_syntax(inp.file_path)  # EDIT-VALIDATE-1 codes 14 and 11, before any I/O
    path = ctx.expand(inp.file_path)
    rule = matching_deny_rule(ctx.session, path, edit_rule_tools(ctx.session, path))
    if rule is not None:
        raise errors.EditDeniedError(
            f"File is covered by a deny rule in your permission settings ({rule.text}) "
            "and cannot be edited."
        )
    st = fileio.stat(path)
    if st.kind not in (fileio.FileKind.MISSING, fileio.FileKind.REGULAR):
        raise errors.NotARegularFileError(f"Cannot edit {path}: it is not a regular file.")
    if st.size > MAX_EDIT_BYTES:
        raise errors.FileTooLargeError(
            f"File is too large to edit ({st.size} bytes; the limit is {MAX_EDIT_BYTES})."
        )
    missing = st.kind is fileio.FileKind.MISSING
    if missing and inp.old_string != "":  # EDIT-VALIDATE-1: existence before the notebook
        raise errors.FileDoesNotExistError(
            paths.file_does_not_exist_message(path, ctx.cwd, ctx.session.profile)
        )
    # EDIT-CREATE-1: a new notebook is refused, unless the profile creates it as any file
    if path.endswith(".ipynb") and not (missing and ctx.session.profile.notebook_created_by_edit):
        raise errors.NotebookFileError(
            "File is a Jupyter Notebook. Use the NotebookEdit tool to edit this file."
        )
    if missing:
        return  # EDIT-CREATE-1
    if inp.old_string == "" and st.size > 0 and current_text(path) != "":
        raise errors.FileAlreadyExistsError("Cannot create new file - file already exists.")
    profile = ctx.session.profile
    record = ctx.session.read_state.get(path)
    if record is None and ctx.session.read_rules[1]:  # EDIT-READ-1
        raise errors.FileNotReadError(NOT_READ_YET)
    stale = record is not None and stale_at_validate(ctx, record, path, st.mtime_ns)
    if stale and not profile.stale_edit_applied:  # STATE-STALE-2, first check
        raise errors.FileModifiedSinceReadError(MODIFIED_SINCE_READ)
    data = fileio.read_bytes(path)
    try:  # TEXT-ENC-2
        current = text.decode(data, text.detect_encoding(data), strict=True)
    except UnicodeDecodeError:
        raise errors.UnsupportedEncodingError(
            "The file is not valid UTF-8 or UTF-16LE text; Edit will not rewrite it."
        ) from None
    plan_edit(
        text.to_lf(current),
        inp.old_string,
        inp.new_string,
        replace_all=inp.replace_all,
        file_path=path,
    )


def call(inp: EditInput, ctx: ToolUseContext) -> ToolResult:
    """EDIT-SEQ-1: mkdir, backup, then the critical section: re-read, re-check, write."""
    path = ctx.expand(inp.file_path)
    refuse_symlink(ctx, path)  # WRITE-ATOMIC-1, under a profile that refuses links
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if fileio.stat(path).kind is fileio.FileKind.REGULAR:
        history.backup(ctx.session.session_dir, fileio.read_bytes(path))  # HIST-1

    # --- critical section ---
    with fileio.write_lock(path):  # STATE-LOCK-1: one writer at a time, across processes
        stale_applied = False  # STATE-STALE-2 under a profile that applies a stale edit
        st = fileio.stat(path)
        if st.kind is fileio.FileKind.MISSING:
            if inp.old_string != "":
                raise errors.FileVanishedError(f"{path} no longer exists.")
            original: str | None = None
            encoding = text.Encoding.UTF8
            new_text = normalize_new_string(inp.new_string, path)
        elif st.kind is fileio.FileKind.REGULAR:
            data = fileio.read_bytes(path)
            encoding = text.detect_encoding(data)
            try:
                original = text.decode(data, encoding, strict=True)
            except UnicodeDecodeError:
                raise errors.FileUnexpectedlyModifiedError(UNEXPECTEDLY_MODIFIED) from None
            record = ctx.session.read_state.get(path)
            profile = ctx.session.profile
            if record is None:
                if ctx.session.read_rules[1]:  # EDIT-READ-1
                    raise errors.FileUnexpectedlyModifiedError(UNEXPECTEDLY_MODIFIED)
            elif stale_in_call(ctx, record, st.mtime_ns, original):
                if not profile.stale_edit_applied:  # STATE-STALE-2, second check
                    raise errors.FileUnexpectedlyModifiedError(UNEXPECTEDLY_MODIFIED)
                stale_applied = True
            plan = plan_edit(
                text.to_lf(original),
                inp.old_string,
                inp.new_string,
                replace_all=inp.replace_all,
                file_path=path,
            )
            new_text = apply_to_original(original, plan)  # EDIT-EOL-1
        else:
            raise errors.FileVanishedError(f"{path} is no longer a regular file.")
        # EDIT-ENC-1: the encoding and byte order mark kept, except that a file with
        # no text filled by an empty old_string loses its mark (EDIT-CREATE-1).
        filled = inp.old_string == "" and not original
        filled = filled and not ctx.session.profile.fill_keeps_bom  # EDIT-CREATE-1's variant
        written = fileio.atomic_write(
            path,
            text.encode(new_text, encoding, bom=not filled),
            clean_killed=ctx.session.profile.killed_writer_cleanup,
        )
    # --- end of critical section ---

    record_own_write(  # EDIT-STATE-1, EDIT-NOTIFY-1
        ctx,
        path,
        text=new_text,
        written=written,
        source="edit",
        change="created" if original is None else "changed",
    )
    return ToolResult(  # EDIT-RESULT-1
        data={
            "filePath": named_path(ctx, inp.file_path, path),  # FILE-PATH-1
            "oldString": inp.old_string,
            "newString": inp.new_string,
            "originalFile": original,
            "structuredPatch": structured_patch(original or "", new_text),
            "replaceAll": inp.replace_all,
            "userModified": False,
            **({"staleApplied": True} if stale_applied else {}),
        }
    )


def inputs_equivalent(a: EditInput, b: EditInput, ctx: ToolUseContext) -> bool:
    """EDIT-EQUIV-1: same file, and the same result on its current content."""
    if ctx.expand(a.file_path) != ctx.expand(b.file_path):
        return False
    if a == b:
        return True
    path = ctx.expand(a.file_path)
    try:
        current = text.to_lf(current_text(path)) if os.path.isfile(path) else ""
        kwargs = {"file_path": path}
        first = plan_edit(current, a.old_string, a.new_string, replace_all=a.replace_all, **kwargs)
        second = plan_edit(current, b.old_string, b.new_string, replace_all=b.replace_all, **kwargs)
    except errors.Refusal:
        return False
    return first.new_text == second.new_text


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    done = "edit_done_all" if data["replaceAll"] else "edit_done"  # EDIT-RESULT-1
    message = profile.text(done, path=data["filePath"])
    if data.get("staleApplied"):  # STATE-STALE-2 under claude-code-latest
        return message + STALE_EDIT_NOTE
    if profile.edit_state_note:  # EDIT-RESULT-1: the note is in the text, not the output
        message += STATE_NOTE
    return message


EDIT_TOOL: Final[Tool[EditInput]] = build_tool(
    name=NAME,
    input_model=EditInput,
    call=call,
    validate_input=validate_input,
    description="Performs exact string replacements in a file.",
    error_codes={
        errors.NoChangesError: 1,
        errors.EditDeniedError: 2,
        errors.FileAlreadyExistsError: 3,
        errors.FileDoesNotExistError: 4,
        errors.NotebookFileError: 5,
        errors.FileNotReadError: 6,
        errors.FileModifiedSinceReadError: 7,
        errors.StringNotFoundError: 8,
        errors.MultipleMatchesError: 9,
        errors.FileTooLargeError: 10,
        errors.UncPathError: 11,
        errors.NotARegularFileError: 12,
        errors.UnsupportedEncodingError: 13,
        errors.InvalidPathError: 14,
    },
    map_result=map_result,
    path_fields=("file_path",),
    get_path=file_path_of,
    path_rules="edit",
    classifier_input=lambda inp: inp.file_path,
    inputs_equivalent=inputs_equivalent,
)
