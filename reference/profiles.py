"""Behaviour profiles: the contracts the engine can play, one per session (SPEC.md 0.5).

A profile names a variant for each SPEC ID whose behaviour differs between
contracts; every other ID is the same under all of them. This module is the
one place that decides what a profile changes: the tools read a field of
``session.profile`` (each field cites its ID), they never test a profile's
name. A new variant is a new field here, its value in the profiles that
have it, and the ``profiles:`` statement of its ID's evidence entry
(``spec/evidence/``), from which SPEC.md's annex of each profile is generated.

``open`` lists the IDs a profile was measured to differ on but does not
model (PROFILE-OPEN-1): the engine plays the documented behaviour there, and
the scenarios of that behaviour do not hold under the profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from pydantic import ValidationInfo

from reference.texts import TEXTS, render

__all__ = [
    "DEFAULT_PROFILE",
    "DOCUMENTED",
    "PROFILES",
    "STALE_EDIT_NOTE",
    "STATE_NOTE",
    "VARIANT_IDS",
    "Profile",
    "SimilarNames",
    "WriteRead",
    "profile_named",
    "varying_ids",
]

WriteRead = Literal["full", "any", "unread-text"]
SimilarNames = Literal["case-or-stem", "stem-sorted", "stem-listed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """One contract's variants (PROFILE-SET-1); the defaults are the documented contract."""

    name: str
    version: str | None = None
    """The measured release the profile plays, when it plays one (PROFILE-SET-1)."""
    write_read: WriteRead = "full"
    """WRITE-READ-1: the record Write needs over an existing file: a full one, any one
    (partial included), or, for a file Read would show as text, none at all
    (``unread-text``; an image, a PDF or a notebook still needs a full one). A record
    there is, is checked for staleness all the same."""
    edit_needs_read: bool = True
    """EDIT-READ-1: Edit of an existing file needs a record."""
    read_kept_for_models: tuple[str, ...] = ()
    """WRITE-READ-1, EDIT-READ-1: the model families under which the profile's release
    keeps the check of a never-read file whatever ``write_read`` and ``edit_needs_read``
    say: Write then needs some record (partial included) and Edit a record. A session's
    model is its ``ANTHROPIC_MODEL``, else the settings' ``model``; it is one of these when
    it is the family's name, or that name and a ``-YYYYMMDD`` date."""
    stale_edit_applied: bool = False
    """STATE-STALE-2: a stale record does not refuse an Edit; the edit is applied to
    the file as it is now and the result carries STALE_EDIT_NOTE."""
    stale_by_content: bool = False
    """STATE-STALE-1: a later mtime makes a record stale only when the text differs, line
    endings aside, in both checks of Write and Edit (not only in ``call()``)."""
    dedup: bool = True
    """READ-DEDUP-1: an unchanged re-read answers with the stub."""
    thin_space_retry: bool = True
    """READ-THINSPACE-1: a missing screenshot-style path is retried with the other space."""
    write_state_note: bool = False
    """WRITE-RESULT-1: a successful Write's output has ``userModified: false`` and its
    text ends with STATE_NOTE."""
    edit_state_note: bool = False
    """EDIT-RESULT-1: a successful Edit's text ends with STATE_NOTE (not when STALE_EDIT_NOTE
    is there: the file then holds changes the model has not seen)."""
    write_keeps_bom: bool = False
    """WRITE-ENC-1: Write over a file with a byte order mark keeps the mark."""
    fill_keeps_bom: bool = False
    """EDIT-CREATE-1: an Edit filling a file of only a byte order mark keeps the mark."""
    notebook_final_newline: bool = False
    """NBEDIT-WRITE-1: the written notebook ends with a newline when the file did."""
    notebook_type_fields: bool = False
    """NBEDIT-REPLACE-1: a cell whose type a replace changes gets its new type's fields
    (code: ``execution_count`` and ``outputs``, added last; markdown: neither)."""
    unnamed_insert_text: bool = False
    """NBEDIT-RESULT-1: an insert into a notebook without cell ids (nbformat before 4.5)
    answers ``Inserted a new cell with SOURCE``."""
    hook_texts_in_result: bool = True
    """HOOK-CONTEXT-1: the hooks' additional contexts and feedback are appended to the
    call's tool_result (else the release shows them beside it, not in it)."""
    bash_output: Literal["documented", "release"] = "documented"
    """BASH-RESULT-1: the structured output of a command that succeeded: documented, or as
    the releases give it, ``{"stdout", "stderr", "interrupted": false, "isImage": false,
    "noOutputExpected"}`` with a reset line in ``stderr`` after a newline, and
    ``noOutputExpected`` true for a ``cd``."""
    bash_failure_shortens_message: bool = False
    """BASH-FAIL-2: the whole failure message (its ``Exit code N`` line included) is what is
    shortened, rather than the output alone."""
    bash_failure_limit_on_output: bool = False
    """BASH-FAIL-2, with ``bash_failure_shortens_message``: the whole message is shortened
    only when the output alone is over the limit (else whenever the message is)."""
    signal_death_code: int | None = None
    """BASH-FAIL-1: the exit code shown when the command's shell itself dies by a signal:
    None for 128 + N, else this number."""
    bash_failure_reset_line: bool = True
    """BASH-CWD-1: the text of a failed command ends with the reset line too."""
    modifiers_between_batches: bool = True
    """SCHED-CONTEXT-1: a non-safe call's context modifier (a Bash ``cd``) applies as soon as
    it ends, so later batches of the message see it (else only the next message does)."""
    bash_cascade: bool = True
    """SCHED-CASCADE-1: a failed Bash cancels the other calls of its batch."""
    hook_updated_input: Literal["with-allow-or-ask", "always", "last-ended"] = "with-allow-or-ask"
    """HOOK-UPDATE-1: a PreToolUse hook's ``updatedInput`` replaces the input when its hook
    allows or asks, or whatever its hook decided (a deny still blocks the call); or only
    the hook that ended last counts, whatever it decided, and when it gave none the
    model's input runs."""
    killed_writer_cleanup: bool = True
    """WRITE-ATOMIC-2: a write under the directory lock uses the one temporary name and
    removes what a killed writer left there (else a random name, and nothing removed)."""
    notebook_created_by_edit: bool = False
    """EDIT-CREATE-1: an Edit with an empty ``old_string`` creates a missing ``.ipynb`` as
    any file, the notebook check applying to existing files only."""
    result_paths_as_given: bool = False
    """FILE-PATH-1: Read's, Write's and Edit's results (the text and the structured output's
    ``filePath``) name the path as the call gave it, not the expanded path."""
    glob_hidden_switch: Literal["leaves-out", "pattern-wins"] = "leaves-out"
    """GLOB-HIDDEN-1: what ``CLAUDE_CODE_GLOB_HIDDEN`` set to false does: leave every dot
    file and dot directory out, or (``pattern-wins``, ripgrep's globs over its hidden
    rule) list a dot file that matches and enter a dot directory only when its own path
    matches, a trailing ``/**`` needing a segment below it."""
    glob_ignore_switch: bool = True
    """GLOB-IGNORE-1: ``CLAUDE_CODE_GLOB_NO_IGNORE`` set to false applies ``.gitignore``
    files (else the variable is not read: nothing is ignored)."""
    glob_paths_relative: bool = False
    """GLOB-OUTPUT-1: Glob names a file below the cwd by its path relative to the cwd, in
    the text and in ``filenames``."""
    grep_paths_relative: bool = False
    """GREP-OUTPUT-1: Grep names a file below the cwd by its path relative to the cwd, in
    the text and in the structured output (a context line of ``content`` keeps the absolute
    path)."""
    grep_output: Literal["documented", "release"] = "documented"
    """GREP-OUTPUT-1: the structured output has every field (null where it does not apply),
    or, as the releases give it, only the mode's: ``files_with_matches`` ``{"mode",
    "filenames", "numFiles"}``, ``content`` ``{"mode", "numFiles": 0, "filenames": [],
    "content", "numLines"}``, ``count`` ``{"mode", "numFiles", "filenames": [], "content",
    "numMatches"}``, each followed by ``appliedLimit`` and ``appliedOffset`` when set."""
    numeric_strings: bool = False
    """DISP-SCHEMA-1: Read's ``offset`` and ``limit`` given as a string of digits
    (``limit: "5"``) are read as that number rather than refused."""
    read_offset_zero: bool = False
    """READ-RANGE-1: Read takes ``offset: 0``, showing the view of offset 1 numbered from 0
    (every number one less than its line's), rather than refusing it."""
    empty_image_is_text: bool = True
    """IMG-DETECT-1: an empty file named like an image is an empty text file (else Read
    refuses it: ``Image file is empty: PATH``)."""
    binary_extensions: frozenset[str] | None = None
    """READ-BINARY-1: None where binary is told by the bytes; else the extensions (lowercase,
    without the dot) by which the profile's release tells it: ``validate_input`` refuses a
    path whose extension, any case, is one of them (before looking for the file, after the
    deny rules) with the ``binary_file`` text, and every other file is read as text, NULs
    and all (images, PDFs and notebooks keep their kinds)."""
    read_decodes_utf16: bool = True
    """TEXT-ENC-1: Read decodes a UTF-16LE file (else it reads its bytes as UTF-8, each
    byte that is no UTF-8 a replacement character, the NULs shown)."""
    read_default_limit: bool = True
    """READ-RANGE-2: Read without ``limit`` shows at most its default number of lines (else
    the whole file, the size and token gates its only bounds)."""
    hook_spaced_lists: bool = True
    """HOOK-MATCH-1: a list matcher may hold spaces and commas (else a matcher with either
    is a regular expression, so ``Read | Write`` matches neither name)."""
    grep_invalid_pattern_errs: bool = True
    """GREP-ERROR-1: an invalid pattern is an error (else it finds nothing)."""
    grep_past_end_notice: bool = True
    """GREP-PAGE-1: an offset past the last entry answers ``No entries at this offset`` (else
    the mode's text for an empty search, with its pagination where the mode shows it)."""
    grep_count_totals_alone: bool = True
    """GREP-COUNT-1: the totals count a file searched alone (its bare ``N``); else they count
    only the ``PATH:N`` entries, so a file searched alone totals zero."""
    bash_rules_cover_file_commands: bool = True
    """PERM-BASH-1: a ``Bash(...)`` allow specifier covers a part that runs ``mkdir``,
    ``touch``, ``rm``, ``rmdir``, ``mv``, ``cp`` or ``sed`` in place, or that redirects output
    to a file (else only the bare ``Bash`` rule allows such a part: the call asks)."""
    read_deny_blocks_edits: Literal["always", "existing"] = "always"
    """PERM-READDENY-1: a ``Read`` deny rule also denies Edit, Write and NotebookEdit of a
    path: always, or only of a path where something exists (creation not denied)."""
    # --- notebooks, NotebookEdit and PDFs ---
    notebook_edit_output: Literal["documented", "release"] = "documented"
    """NBEDIT-RESULT-1: NotebookEdit's structured output: documented, or as the releases give
    it, ``{"new_source", "cell_id", "cell_type", "language", "edit_mode", "error": "",
    "notebook_path", "original_file", "updated_file"}``: ``cell_type`` the call's (``code``
    when it gives none), ``language`` the notebook's ``metadata.language_info.name`` (else
    ``python``), the file's text before and as written, no ``cell_id`` for a cell without a
    name."""
    notebook_old_source: bool = False
    """NBEDIT-RESULT-1, with the releases' output: a replaced or deleted cell's source before
    the edit is in it too, as ``old_source``."""
    unnamed_cell: str | None = None
    """NBEDIT-RESULT-1: None names a cell without an id ``cell-N`` (its index); else such a
    cell (replaced, deleted or new) has no name: the text says this in its place (2.1.88:
    ``undefined``) and the structured output has no ``cell_id``."""
    new_cell_id_hex: bool = False
    """NBEDIT-INSERT-1: a new cell's id is 8 lower-case hexadecimal digits (else 11
    lower-case letters and digits)."""
    notebook_missing_unread: bool = False
    """NBEDIT-VALIDATE-1: a missing notebook with no record is refused as never read (code
    8 and its message) before it is refused as missing (code 7)."""
    notebook_joined_text: bool = False
    """NB-RENDER-1: a notebook read's content has each run of text blocks joined by newlines
    into one (the images between them stay blocks of their own)."""
    notebook_release_outputs: bool = False
    """NB-OUTPUT-1: an output's text is shown after a newline, an execute_result's or
    display_data's text/plain before its first image, the only image shown, and ANSI
    sequences are kept."""
    notebook_shown_cells: bool = False
    """NB-RENDER-1: a notebook read's structured output holds the cells as shown (each
    ``{"cellType", "source", "execution_count"?, "cell_id", "language"?, "outputs"?}``, an
    output ``{"output_type", "text", "image"?: {"image_data", "media_type"}}``), not as
    stored; the content is rendered from them."""
    pdf_pages_syntax: Literal["strict", "lenient", "lenient-no-lists"] = "strict"
    """PDF-PAGES-1: ``pages`` is ``N`` or ``N-M`` exactly, or read leniently, each side of
    the first ``-`` as its leading integer (``1 - 2`` is 1-2, ``1,3`` is page 1), a comma
    refused with ``lenient-no-lists``."""
    pdf_empty_pages_absent: bool = False
    """PDF-PAGES-1: an empty ``pages`` is no ``pages`` (the PDF is read whole) rather than a
    malformed one."""
    pdf_empty_password_read: bool = False
    """PDF-OPEN-1: with ``pages``, an encrypted PDF that opens with the empty user password
    is read (else it is refused as password protected)."""
    pdf_document_in_result: bool = True
    """PDF-SEND-1: a PDF read's document block is in the tool_result (else the release sends
    it beside the result, which holds only the ``pdf_whole_read`` note)."""
    pdf_whole_output_counts_pages: bool = True
    """PDF-SEND-1: a whole PDF read's structured output has ``numPages`` and ``pages``
    (else only ``filePath``, ``base64`` and ``originalSize``)."""
    # -- validation, schema error, read, registry, MCP and hook-input variants --
    schema_constraints: Literal["lines", "issues"] = "lines"
    """DISP-SCHEMA-2: a value breaking a constraint gets its ``is invalid`` line, or, as the
    releases do, no line; when no other line is left the text is ``InputValidationError:``
    and the breached constraints' issue list as indented JSON."""
    non_object_input: Literal["refused", "null-empty", "spread"] = "refused"
    """DISP-SCHEMA-2: a non-object input is refused with its own line, or ``null`` is checked
    as an empty object (the rest refused), or every non-object is checked as the object a
    script's spread makes of it (an array's and a string's entries by index, else none)."""
    hook_input_unknown_keys: Literal["refused", "dropped"] = "refused"
    """HOOK-UPDATE-1: a key of a hook's ``updatedInput`` the tool's schema does not know is
    refused by the schema check, as a model's would be, or dropped before it."""
    hook_input_expanded: bool = False
    """HOOK-UPDATE-1: ``call()`` receives a hook's replacement input in its observable form
    (paths expanded, DISP-BACKFILL-1) rather than as the hook gave it, so a result naming
    the path as given (FILE-PATH-1) names it expanded."""
    empty_view_notice: Literal["any", "past-end"] = "any"
    """READ-OFFSET-1: every view with no text is the notice, or only a view past the last
    line and the view of a file with no text: a view of empty lines inside a file with text
    shows them numbered."""
    similar_names: SimilarNames = "case-or-stem"
    """READ-SUGGEST-1: the sibling a missing file's message suggests: one equal ignoring case,
    else one of the same stem, each the first in name order; or only one of the same stem
    (case counts), the first in name order or in the directory's own listing order."""
    # -- claude-code-latest's own variants (2.1.332) ----------------------------------
    write_through_symlinks: bool = True
    """WRITE-ATOMIC-1: Write, Edit and NotebookEdit of a symbolic link replace its target
    (else they refuse the link in call(), naming its target, and change nothing)."""
    read_limit_zero: bool = False
    """READ-RANGE-2: Read takes ``limit: 0`` as no limit (the view without ``limit``),
    rather than refusing it."""
    allow_unsplittable_whole: bool = True
    """PERM-BASH-2: an allow rule may cover a command that cannot be split, matched whole
    (else no allow rule covers it: it asks, or is refused where nothing can ask)."""
    allow_redirects_and_quoted: bool = True
    """PERM-BASH-3: the allow rule written exactly as a part that writes a file by
    redirection covers it, and a ``$(`` inside single quotes is literal text (else no allow
    rule covers a part that writes a file by redirection, nor one holding ``$(`` anywhere)."""
    project_bypass: bool = True
    """PERM-MODE-4: ``defaultMode: bypassPermissions`` is taken from the project's settings
    files (projectSettings, localSettings) as from any source (else it is skipped there, as
    an invalid value is, and the next source decides the mode)."""
    concurrency_limited: bool = True
    """SCHED-LIMIT-1: at most N safe calls run at once, N from
    ``CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`` or 10 (else the variable is not read and every
    safe call of a batch runs at once)."""
    concurrency_leading_digits: bool = False
    """SCHED-LIMIT-1: ``CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`` is read by its leading digits
    (``2.5`` is 2, ``3x`` is 3) rather than only as a whole decimal integer."""
    search_numeric_strings: bool = False
    """REG-SEARCH-1: ToolSearch's ``max_results`` is any number, or a string of digits
    (``"2"``), rather than an integer of at least 1: truncated to an integer, it slices the
    ranked matches (0 returns none, a negative one drops that many from the end)."""
    hook_block_wins: bool = False
    """HOOK-DECISION-1: a PreToolUse hook's deprecated ``decision: block`` denies the call
    whatever its ``permissionDecision`` says (its ``reason`` the denial's), rather than
    ``permissionDecision`` being read first."""
    bash_wider_read_only: bool = False
    """BASH-READONLY-1: for the permission decision, ``printf``, ``tr``, ``uniq`` with options
    only, and an input redirection from a file are read-only too (the partition into batches
    keeps the documented list)."""
    plan_as_default: bool = True
    """PERM-MODE-3: plan mode decides every call as default mode does (else a PreToolUse
    hook's allow does not allow in plan mode, so the call asks, and a Bash call that would
    ask by default is denied without a prompt, its safety check said to be unavailable)."""
    token_cap_pages: bool = False
    """TOK-GATE-2: a whole-file Read (neither ``offset`` nor ``limit``) whose view is over
    the cap is not refused: it shows the longest first page within the cap, its output
    saying ``truncatedByTokenCap: true`` (a read with ``offset`` or ``limit`` is still
    refused)."""
    count_whole_view: bool = False
    """TOK-EXACT-2: a refusal names the whole view's count (``N tokens``), counted to the end
    (within TOK-BOUND-1's bytes), rather than ``more than N tokens`` from a count that
    stopped past the cap."""
    write_over_undecodable: bool = True
    """WRITE-CONTENT-1: Write replaces an existing file whose bytes are not valid in its
    encoding (else it refuses it in call() and the file keeps its bytes)."""
    texts: Mapping[str, str] = field(default_factory=dict)
    """The release's template for each text (a key of ``reference.texts.TEXTS``) it
    renders otherwise than documented; the annex lists the key's ID."""
    # PROFILE-OPEN-1: the engine plays the documented behaviour for these IDs
    open: frozenset[str] = frozenset()
    """IDs measured to differ that this profile does not model."""

    def text(self, key: str, **fields: object) -> str:
        """The text ``key`` renders under this profile, ``fields`` filled in."""
        return render(self.texts.get(key, TEXTS[key].template), fields)


VARIANT_IDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "write_read": "WRITE-READ-1",
        "edit_needs_read": "EDIT-READ-1",
        "read_kept_for_models": "EDIT-READ-1",
        "stale_edit_applied": "STATE-STALE-2",
        "stale_by_content": "STATE-STALE-1",
        "dedup": "READ-DEDUP-1",
        "read_deny_blocks_edits": "PERM-READDENY-1",
        "bash_rules_cover_file_commands": "PERM-BASH-1",
        "thin_space_retry": "READ-THINSPACE-1",
        "write_state_note": "WRITE-RESULT-1",
        "edit_state_note": "EDIT-RESULT-1",
        "notebook_final_newline": "NBEDIT-WRITE-1",
        "notebook_type_fields": "NBEDIT-REPLACE-1",
        "unnamed_insert_text": "NBEDIT-RESULT-1",
        "write_keeps_bom": "WRITE-ENC-1",
        "fill_keeps_bom": "EDIT-CREATE-1",
        "hook_texts_in_result": "HOOK-CONTEXT-1",
        "bash_output": "BASH-RESULT-1",
        "bash_failure_shortens_message": "BASH-FAIL-2",
        "bash_failure_limit_on_output": "BASH-FAIL-2",
        "bash_failure_reset_line": "BASH-CWD-1",
        "signal_death_code": "BASH-FAIL-1",
        "modifiers_between_batches": "SCHED-CONTEXT-1",
        "bash_cascade": "SCHED-CASCADE-1",
        "hook_updated_input": "HOOK-UPDATE-1",
        "killed_writer_cleanup": "WRITE-ATOMIC-2",
        "notebook_created_by_edit": "EDIT-CREATE-1",
        "result_paths_as_given": "FILE-PATH-1",
        "glob_hidden_switch": "GLOB-HIDDEN-1",
        "glob_ignore_switch": "GLOB-IGNORE-1",
        "glob_paths_relative": "GLOB-OUTPUT-1",
        "grep_paths_relative": "GREP-OUTPUT-1",
        "grep_output": "GREP-OUTPUT-1",
        "numeric_strings": "DISP-SCHEMA-1",
        "read_offset_zero": "READ-RANGE-1",
        "read_default_limit": "READ-RANGE-2",
        "read_decodes_utf16": "TEXT-ENC-1",
        "binary_extensions": "READ-BINARY-1",
        "empty_image_is_text": "IMG-DETECT-1",
        "hook_spaced_lists": "HOOK-MATCH-1",
        "grep_invalid_pattern_errs": "GREP-ERROR-1",
        "grep_past_end_notice": "GREP-PAGE-1",
        "grep_count_totals_alone": "GREP-COUNT-1",
        # notebooks, NotebookEdit and PDFs
        "notebook_edit_output": "NBEDIT-RESULT-1",
        "notebook_old_source": "NBEDIT-RESULT-1",
        "unnamed_cell": "NBEDIT-RESULT-1",
        "new_cell_id_hex": "NBEDIT-INSERT-1",
        "notebook_joined_text": "NB-RENDER-1",
        "notebook_shown_cells": "NB-RENDER-1",
        "notebook_release_outputs": "NB-OUTPUT-1",
        "notebook_missing_unread": "NBEDIT-VALIDATE-1",
        "pdf_document_in_result": "PDF-SEND-1",
        "pdf_empty_password_read": "PDF-OPEN-1",
        "pdf_pages_syntax": "PDF-PAGES-1",
        "pdf_empty_pages_absent": "PDF-PAGES-1",
        "pdf_whole_output_counts_pages": "PDF-SEND-1",
        # validation, schema error, read, registry, MCP and hook-input variants
        "schema_constraints": "DISP-SCHEMA-2",
        "non_object_input": "DISP-SCHEMA-2",
        "similar_names": "READ-SUGGEST-1",
        "empty_view_notice": "READ-OFFSET-1",
        "hook_input_unknown_keys": "HOOK-UPDATE-1",
        "hook_input_expanded": "HOOK-UPDATE-1",
        # claude-code-latest's own variants (2.1.332)
        "write_through_symlinks": "WRITE-ATOMIC-1",
        "write_over_undecodable": "WRITE-CONTENT-1",
        "read_limit_zero": "READ-RANGE-2",
        "allow_unsplittable_whole": "PERM-BASH-2",
        "allow_redirects_and_quoted": "PERM-BASH-3",
        "project_bypass": "PERM-MODE-4",
        "concurrency_limited": "SCHED-LIMIT-1",
        "concurrency_leading_digits": "SCHED-LIMIT-1",
        "search_numeric_strings": "REG-SEARCH-1",
        "hook_block_wins": "HOOK-DECISION-1",
        "bash_wider_read_only": "BASH-READONLY-1",
        "plan_as_default": "PERM-MODE-3",
        "token_cap_pages": "TOK-GATE-2",
        "count_whole_view": "TOK-EXACT-2",
    }
)
"""Each variant field of :class:`Profile` and the SPEC ID whose annex row states it."""


def varying_ids(profile: Profile) -> dict[str, str]:
    """ID -> ``variant`` or ``open``: where ``profile`` differs from the documented contract."""
    out = dict.fromkeys(profile.open, "open")
    for name, rid in VARIANT_IDS.items():
        if getattr(profile, name) != getattr(DOCUMENTED, name):
            out.setdefault(rid, "variant")
    for key, template in profile.texts.items():
        if template != TEXTS[key].template:
            out.setdefault(TEXTS[key].rid, "variant")
    return out


DONT_ASK_DENIAL: Final = (  # PERM-MESSAGE-1 under both releases, as 2.1.88 and 2.1.332 wrote it
    "Permission to use {tool} has been denied because Claude Code is running in don't ask "
    "mode. IMPORTANT: You *may* attempt to accomplish this action using other tools that "
    "might naturally be used to accomplish this goal, e.g. using head instead of cat. But you "
    "*should not* attempt to work around this denial in malicious ways, e.g. do not use your "
    "ability to run tests to execute non-test actions. You should only try to work around "
    "this restriction in reasonable ways that do not attempt to bypass the intent behind this "
    "denial. If you believe this capability is essential to complete the user's request, STOP "
    "and explain to the user what you were trying to do and why you need this permission. "
    "Let the user decide how to proceed."
)

BINARY_EXTENSIONS_2188: Final = frozenset(
    {  # READ-BINARY-1 under claude-code-2.1.88: the extensions it was measured to refuse
        *("a", "o", "so", "dylib", "dll", "lib", "obj", "exe", "msi", "node", "wasm"),
        *("class", "jar", "pyc", "pyo", "zip", "gz", "tgz", "tar", "bz2", "xz", "7z", "rar"),
        *("deb", "rpm", "iso", "bin", "dat", "db", "sqlite", "sqlite3", "mp3", "mp4", "wav"),
        *("avi", "mov", "mkv", "flac", "ogg", "ttf", "otf", "woff", "woff2", "eot", "ico"),
        *("bmp", "tif", "tiff", "psd", "blend", "swf", "doc", "docx", "xls", "xlsx", "ppt"),
        *("pptx", "odt"),
    }
)

BINARY_EXTENSIONS_LATEST: Final = BINARY_EXTENSIONS_2188 | {
    # READ-BINARY-1 under claude-code-latest: 2.1.332 refuses these too
    *("dmg", "lz4", "apk", "heic", "heif", "avif"),
}

RELEASE_NOTEBOOK_PDF_TEXTS: Final[Mapping[str, str]] = MappingProxyType(
    {  # notebooks, NotebookEdit and PDFs: as 2.1.88 and 2.1.332 both wrote them
        "nbedit_not_notebook": (
            "File must be a Jupyter notebook (.ipynb file). For editing other file types, use "
            "the FileEdit tool."
        ),
        "nbedit_not_json": "Notebook is not valid JSON.",
        "nbedit_index_not_found": "Cell with index {index} does not exist in notebook.",
        "pdf_pages_too_many": (
            'Page range "{pages}" exceeds maximum of {limit} pages per request. Please use a '
            "smaller range."
        ),
        "pdf_too_large": "PDF file exceeds maximum allowed size of 20MB.",
        "pdf_pages_required": (
            "This PDF has {count} pages, which is too many to read at once. Use the pages "
            'parameter to read specific page ranges (e.g., pages: "1-5"). Maximum {limit} '
            "pages per request."
        ),
        "pdf_whole_read": "PDF file read: {path} ({size})",
        "notebook_too_many_tokens": (
            "File content ({amount}) exceeds maximum allowed tokens ({cap}). Use offset and "
            "limit parameters to read specific portions of the file, or search for specific "
            "content instead of reading the whole file."
        ),
    }
)

RELEASE_VALIDATION_TEXTS: Final[Mapping[str, str]] = MappingProxyType(  # both releases
    {  # DISP-SCHEMA-2 under both releases: an integer field's type, by what was given
        "schema_integer_type": "number",
        "schema_integer_fraction": "int",
        # READ-MISSING-1: Read's missing file not wrapped; READ-SUGGEST-1: the name alone
        "read_missing": "{message}",
        "did_you_mean": " Did you mean {name}?",
        # BASH-VALIDATE-1: run_in_background is no parameter while background tasks are off
        "bash_background_disabled": (
            "<tool_use_error>InputValidationError: Bash failed due to the following issue:\n"
            "An unexpected parameter `run_in_background` was provided</tool_use_error>"
        ),
    }
)

DOCUMENTED: Final = Profile(name="documented")

_PROFILES: Final = (
    DOCUMENTED,
    Profile(
        name="claude-code-2.1.88",
        version="2.1.88",
        write_read="any",
        read_deny_blocks_edits="existing",
        bash_rules_cover_file_commands=False,
        concurrency_leading_digits=True,
        thin_space_retry=False,
        result_paths_as_given=True,
        modifiers_between_batches=False,
        bash_output="release",
        bash_failure_reset_line=False,
        signal_death_code=1,
        bash_failure_shortens_message=True,
        bash_cascade=False,
        hook_updated_input="last-ended",
        killed_writer_cleanup=False,
        notebook_created_by_edit=True,
        glob_hidden_switch="pattern-wins",
        glob_ignore_switch=False,
        glob_paths_relative=True,
        grep_paths_relative=True,
        grep_output="release",
        grep_invalid_pattern_errs=False,
        hook_spaced_lists=False,
        numeric_strings=True,
        read_offset_zero=True,
        read_default_limit=False,
        read_decodes_utf16=False,
        binary_extensions=BINARY_EXTENSIONS_2188,
        empty_image_is_text=False,
        grep_past_end_notice=False,
        grep_count_totals_alone=False,
        hook_texts_in_result=False,
        # notebooks, NotebookEdit and PDFs
        notebook_edit_output="release",
        unnamed_cell="undefined",
        notebook_missing_unread=True,
        notebook_joined_text=True,
        notebook_release_outputs=True,
        notebook_shown_cells=True,
        pdf_whole_output_counts_pages=False,
        pdf_document_in_result=False,
        # validation, schema error, read, registry, MCP and hook-input variants
        schema_constraints="issues",
        non_object_input="null-empty",
        similar_names="stem-sorted",
        pdf_empty_password_read=True,
        pdf_pages_syntax="lenient",
        texts={
            # validation, schema error, read, registry, MCP and hook-input texts
            **RELEASE_VALIDATION_TEXTS,
            "schema_not_object": (
                "The parameter `` type is expected as `object` but provided as `{provided}`"
            ),
            "call_error": "{message}",
            "hook_denial_bare": "Hook PreToolUse:{tool} denied this tool",
            "hook_denial_exit2": "PreToolUse:{tool} hook error: [{command}]: {stderr}",
            "hook_denial_exit2_bare": "PreToolUse:{tool} hook error: [{command}]: No stderr output",
            "hook_block": "{reasons}",
            "deny_rule_command": "Permission to use {tool} with command {command} has been denied.",
            "deny_rule_search": "Permission to read {path} has been denied.",
            "deny_rule_read": (
                "<tool_use_error>File is in a directory that is denied by your permission "
                "settings.</tool_use_error>"
            ),
            "dont_ask": DONT_ASK_DENIAL,
            "edit_done_all": (
                "The file {path} has been updated. All occurrences were successfully replaced."
            ),
            "binary_file": (
                "This tool cannot read binary files. The file appears to be a binary {extension} "
                "file. Please use appropriate tools for binary file analysis."
            ),
            **RELEASE_NOTEBOOK_PDF_TEXTS,
            "pdf_pages_invalid": (
                'Invalid pages parameter: "{pages}". Use formats like "1-5", "3", or "10-20". '
                "Pages are 1-indexed."
            ),
            "read_empty": "(Read completed with no output)",
        },
        open=frozenset(
            {
                "BASH-CAPTURE-1",
                "BASH-PERM-2",
                "BASH-TIMEOUT-1",
                "BASH-TIMEOUT-2",
                "FILE-PATH-2",
                "FILE-PATH-3",
                "GLOB-BASE-1",
                "HOOK-EXIT-1",
                "IMG-DECODE-1",
                "PERM-BASH-4",
                "PERM-PATH-2",
                "PERM-PATH-3",
                "PERM-PATH-4",
                "PERM-SAFETY-1",
                "READ-KIND-1",
                "REG-MCP-1",
                "STATE-STALE-1",
                "STATE-STALE-2",
                "TEXT-ENC-2",
            }
        ),
    ),
    Profile(
        name="claude-code-latest",
        version="2.1.332",
        write_read="unread-text",
        edit_needs_read=False,
        read_kept_for_models=(
            "claude-3-5-haiku",
            "claude-3-5-sonnet",
            "claude-3-7-sonnet",
            "claude-haiku-4-5",
            "claude-opus-4-5",
            "claude-opus-4-6",
            "claude-sonnet-4",
            "claude-sonnet-4-5",
        ),
        stale_edit_applied=True,
        stale_by_content=True,
        dedup=False,
        thin_space_retry=False,
        write_state_note=True,
        edit_state_note=True,
        notebook_final_newline=True,
        notebook_type_fields=True,
        write_keeps_bom=True,
        fill_keeps_bom=True,
        unnamed_insert_text=True,
        result_paths_as_given=True,
        modifiers_between_batches=False,
        bash_output="release",
        bash_failure_reset_line=False,
        signal_death_code=1,
        bash_failure_limit_on_output=True,
        bash_failure_shortens_message=True,
        empty_image_is_text=False,
        numeric_strings=True,
        read_offset_zero=True,
        binary_extensions=BINARY_EXTENSIONS_LATEST,
        bash_cascade=False,
        hook_updated_input="always",
        killed_writer_cleanup=False,
        notebook_created_by_edit=True,
        hook_texts_in_result=False,
        # notebooks, NotebookEdit and PDFs
        notebook_edit_output="release",
        notebook_old_source=True,
        new_cell_id_hex=True,
        notebook_missing_unread=True,
        notebook_joined_text=True,
        notebook_release_outputs=True,
        notebook_shown_cells=True,
        pdf_whole_output_counts_pages=False,
        # validation, schema error, read, registry, MCP and hook-input variants
        schema_constraints="issues",
        non_object_input="spread",
        similar_names="stem-listed",
        empty_view_notice="past-end",
        hook_input_unknown_keys="dropped",
        hook_input_expanded=True,
        read_default_limit=False,
        # 2.1.332's own variants
        write_through_symlinks=False,
        write_over_undecodable=False,
        read_limit_zero=True,
        allow_unsplittable_whole=False,
        allow_redirects_and_quoted=False,
        project_bypass=False,
        concurrency_limited=False,
        search_numeric_strings=True,
        hook_block_wins=True,
        bash_wider_read_only=True,
        plan_as_default=False,
        token_cap_pages=True,
        count_whole_view=True,
        pdf_empty_password_read=True,
        pdf_pages_syntax="lenient-no-lists",
        pdf_empty_pages_absent=True,
        texts={
            # validation, schema error, read, registry, MCP and hook-input texts
            **RELEASE_VALIDATION_TEXTS,
            "read_empty_file": (
                "<system-reminder>Warning: the file exists but the contents are empty."
                "</system-reminder>"
            ),
            "bash_timeout": "Exit code 143\n{output}Command timed out after {seconds}s",
            "deferred_schema_hint": (
                "\n\nThis tool's input schema was not in your prompt when you called it. The "
                "input schema is: {schema}\nIf your input does not match this schema, correct "
                "it and call the tool again. If it matches, the error above has another cause. "
                'If the corrected call fails the same way, call ToolSearch with query "select:'
                '{name}" to load the tool, then call it again.'
            ),
            "bash_nul_command": (
                '<tool_use_error>InputValidationError: [\n  {{\n    "code": "custom",\n'
                '    "path": [\n      "command"\n    ],\n    "message": "command contains '
                'control characters that would be hidden in the approval dialog"\n  }}\n]'
                "</tool_use_error>"
            ),
            "hook_input_invalid": (
                "PreToolUse hook for {tool} returned updatedInput that failed schema validation: "
                "{issues}\nThe tool input from the model was valid; the hook's rewrite of it was "
                "not."
            ),
            "unknown_tool_denied": (
                "Error: No such tool available: {name}. {name} is disabled for this session, "
                "in subagents as well as here."
            ),
            "unknown_tool_case": (
                "Error: No such tool available: {name}. Tool names are case-sensitive: call "
                "{tool} instead."
            ),
            "call_error": "{message}",
            "read_reminder": "",
            "hook_denial": "PreToolUse:{tool} hook error: {reason}",
            "hook_denial_bare": "PreToolUse:{tool} hook error: Blocked by hook",
            "hook_denial_exit2": "PreToolUse:{tool} hook error: [{command}]: {stderr}",
            "hook_denial_exit2_bare": "PreToolUse:{tool} hook error: [{command}]: No stderr output",
            "hook_block": "{reasons}",
            "edit_done_all": (
                "The file {path} has been updated. All occurrences were successfully replaced."
            ),
            "deny_rule_command": "Permission to use {tool} with command {command} has been denied.",
            "deny_rule_read": (
                "<tool_use_error>File is in a directory that is denied by your permission "
                "settings.</tool_use_error>"
            ),
            "dont_ask": DONT_ASK_DENIAL,
            "binary_file": (
                "This tool cannot read binary files. The file appears to be a binary {extension} "
                "file. Use a skill for this file type if one is available, or a shell command or "
                "script that can read the format."
            ),
            **RELEASE_NOTEBOOK_PDF_TEXTS,
            "nbedit_no_cells": (
                'Notebook file is not a valid Jupyter notebook (top-level "cells" must be an '
                'array of cell objects, each with a string or string-array "source").'
            ),
            "notebook_not_json": (
                "Notebook file is not valid JSON (it may be truncated, corrupted, or still "
                "being written): {error}"
            ),
            "notebook_too_large": (
                "Notebook file exceeds the maximum size this tool can read (100MB). Use Bash "
                "with jq to read specific portions:\n"
                "  cat <notebook_path> | jq '.cells[:20]' # First 20 cells\n"
                "  cat <notebook_path> | jq '.cells[100:120]' # Cells 100-120\n"
                "  cat <notebook_path> | jq '.cells | length' # Count total cells\n"
                "  cat <notebook_path> | jq '.cells[] | select(.cell_type==\"code\") | .source'"
                " # All code sources"
            ),
            "pdf_pages_invalid": (
                'Invalid pages parameter: "{pages}". Give one page ("3") or one range ("1-5"), '
                "not a list. To read several pages or ranges, read each one separately. Pages "
                "are 1-indexed."
            ),
            # 2.1.332's own texts
            "token_cap_refusal": (
                "File content ({amount}) exceeds maximum allowed tokens ({cap}). Use offset "
                "and limit parameters to read specific portions of the file, or search for "
                "specific content instead of reading the whole file. To read it anyway, up to "
                "what still fits in your context, call Read again with allow_large: true "
                "\u2014 only if you genuinely need all of it or the user asked for the whole "
                "file."
            ),
            "pdf_invalid": "PDF file is corrupted or invalid.",
            "pdf_page_out_of_range": (
                "Requested page{s} {requested} is outside the document (PDF has {count} pages). "
                "Use a range within 1-{count}, maximum {limit} pages per request (e.g. pages: "
                '"1-{example}").'
            ),
        },
        open=frozenset(
            {
                "BASH-CAPTURE-1",
                "BASH-PERM-2",
                "BASH-TIMEOUT-1",
                "FILE-PATH-3",
                "IMG-DECODE-1",
                "PERM-BASH-4",
                "PERM-PATH-3",
                "PERM-SAFETY-1",
                "READ-KIND-1",
                "REG-MCP-1",
                "TEXT-ENC-2",
            }
        ),
    ),
)

PROFILES: Final[Mapping[str, Profile]] = MappingProxyType({p.name: p for p in _PROFILES})
"""Every profile the engine plays, by name, ``documented`` first (PROTO-HELLO-2)."""

DEFAULT_PROFILE: Final = DOCUMENTED.name


STALE_EDIT_NOTE: Final = (  # STATE-STALE-2 under claude-code-latest, as 2.1.332 wrote it
    " (note: the file had been modified on disk since you last read it \u2014 the edit "
    "applied cleanly, but the file contains other changes not in your context. Read it "
    "before edits that depend on surrounding content.)"
)


STATE_NOTE: Final = (  # WRITE-RESULT-1, EDIT-RESULT-1 under claude-code-latest, as 2.1.332
    " (file state is current in your context \u2014 no need to Read it back)"
)


def profile_named(name: str) -> Profile | None:
    """The profile called ``name``, or None when the engine does not play it."""
    return PROFILES.get(name)


def schema_context(profile: Profile) -> Mapping[str, Any]:
    """What an input model's validators may read of the session: its profile, whose release
    may take inputs the documented schema refuses (DISP-SCHEMA-1, READ-RANGE-1)."""
    return {"profile": profile}


def profile_of(info: ValidationInfo) -> Profile:
    """The session's profile in a validator (:func:`schema_context`); documented without."""
    context = info.context
    found = context.get("profile") if isinstance(context, Mapping) else None
    return found if isinstance(found, Profile) else DOCUMENTED
