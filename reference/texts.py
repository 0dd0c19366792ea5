"""The texts a profile may render otherwise, as templates keyed by what they render.

Each key names one text the engine shows the model: the SPEC ID that gives its
documented form, and that form as a ``str.format`` template whose fields are
what the engine knows when it renders it. A profile that plays a release
(``reference.profiles``) gives, in ``Profile.texts``, the release's template
for each key whose text differs; the tools render through ``Profile.text``
and never test a profile's name. The annex of a profile lists the ID of each
key it renders otherwise (SPEC.md 0.5).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

__all__ = ["TEXTS", "Text", "fields_of", "render"]


@dataclass(frozen=True, slots=True)
class Text:
    """One rendered text: the ID stating its documented form, and that form."""

    rid: str
    template: str


TEXTS: Final[Mapping[str, Text]] = MappingProxyType(
    {
        # ERR-CODE-2: what the model sees of an error raised in call()
        "call_error": Text("ERR-CODE-2", "<tool_use_error>{message}</tool_use_error>"),
        # PERM-MESSAGE-1: a call a deny rule denies, by the kind of call, and dontAsk's denial
        "deny_rule": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied by the rule {rule} from {source}.",
        ),
        "deny_rule_command": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied by the rule {rule} from {source}.",
        ),
        "deny_rule_search": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied by the rule {rule} from {source}.",
        ),
        "deny_rule_read": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied by the rule {rule} from {source}.",
        ),
        "dont_ask": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied because it needs approval and the "
            "permission mode is dontAsk.",
        ),
        # EDIT-RESULT-1: a successful Edit's text, without and with replace_all
        "edit_done": Text("EDIT-RESULT-1", "The file {path} has been updated successfully."),
        "edit_done_all": Text(
            "EDIT-RESULT-1",
            "The file {path} has been updated successfully. All occurrences were replaced.",
        ),
        # READ-REMINDER-1: what follows the lines of a text view
        "read_reminder": Text(
            "READ-REMINDER-1",
            "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it "
            "would be considered malware. You CAN and SHOULD provide analysis of malware, what it "
            "is doing. But you MUST refuse to improve or augment the code. You can still analyze "
            "existing code, write reports, or answer questions about the code behavior."
            "\n</system-reminder>\n",
        ),
        # READ-BINARY-1: a Read of a binary file ({extension} where its name decides)
        "binary_file": Text(
            "READ-BINARY-1",
            "{path} is a binary file and cannot be read as text. "
            "Use a tool suited to its format instead.",
        ),
        # HOOK-BLOCK-1: one denying PreToolUse hook, then the call's whole text
        "hook_denial": Text("HOOK-BLOCK-1", "{reason}"),
        "hook_denial_bare": Text("HOOK-BLOCK-1", ""),
        "hook_denial_exit2": Text("HOOK-BLOCK-1", "{stderr}"),
        "hook_denial_exit2_bare": Text("HOOK-BLOCK-1", ""),
        "hook_block": Text("HOOK-BLOCK-1", "Blocked by PreToolUse hook: {reasons}"),
        "hook_block_bare": Text("HOOK-BLOCK-1", "Blocked by PreToolUse hook"),
        # --- notebooks, NotebookEdit and PDFs ---
        # NBEDIT-VALIDATE-1: NotebookEdit's refusals (codes 4, 10 and 11)
        "nbedit_not_notebook": Text(
            "NBEDIT-VALIDATE-1",
            "File must be a Jupyter notebook (.ipynb file). For editing other file types, use "
            "the Edit tool.",
        ),
        "nbedit_not_json": Text(
            "NBEDIT-VALIDATE-1", "Notebook is not valid JSON or has no cells list."
        ),
        "nbedit_no_cells": Text(
            "NBEDIT-VALIDATE-1", "Notebook is not valid JSON or has no cells list."
        ),
        "nbedit_index_not_found": Text(  # a cell-N name past the last cell
            "NBEDIT-VALIDATE-1", 'Cell with ID "{cell_id}" not found in notebook.'
        ),
        # NB-RENDER-1: a notebook read whose content is empty (documented: no block)
        "read_empty": Text("NB-RENDER-1", ""),
        # NB-PARSE-1, NB-SIZE-1: a notebook Read refuses
        "notebook_not_json": Text(  # error: what the JSON parser said
            "NB-PARSE-1", "Notebook is not valid JSON or has no cells list."
        ),
        "notebook_no_cells": Text("NB-PARSE-1", "Notebook is not valid JSON or has no cells list."),
        "notebook_too_large": Text(
            "NB-SIZE-1",
            "Notebook is larger than 100 MB ({size} bytes) and cannot be read. Use Bash with "
            "jq to read specific cells.",
        ),
        # PDF-PAGES-1, PDF-PAGES-2: a pages value Read refuses
        "pdf_pages_invalid": Text(
            "PDF-PAGES-1",
            'Invalid pages parameter: "{pages}". Use a page number such as "3" or a range '
            'such as "1-5".',
        ),
        "pdf_pages_too_many": Text(
            "PDF-PAGES-2",
            'Page range "{pages}" has {count} pages; at most {limit} pages can be read per call.',
        ),
        # PDF-REQUIRE-1: a whole read of a PDF of more than 10 pages
        "pdf_pages_required": Text(
            "PDF-REQUIRE-1",
            "This PDF has {count} pages, which is more than {most}. Read it in ranges with the "
            'pages parameter (for example pages: "1-5"), at most {limit} pages per call.',
        ),
        # PDF-SEND-1: a note before a whole read's document block (documented: none)
        "pdf_whole_read": Text("PDF-SEND-1", ""),
        # PDF-SIZE-1: a PDF too large to send
        "pdf_too_large": Text(
            "PDF-SIZE-1",
            "PDF too large (max 100 pages, 20MB). Try reading the file a different way "
            "(e.g., extract text with pdftotext).",
        ),
        # -- validation, schema error, read, registry, MCP and hook-input texts --
        # READ-OFFSET-1: a view with no text; READ-EMPTY-1: the view of a file with no text
        "read_empty_view": Text(
            "READ-OFFSET-1",
            "<system-reminder>Warning: the file exists but is shorter than the provided offset "
            "({offset}). The file has {lines} lines.</system-reminder>",
        ),
        "read_empty_file": Text(
            "READ-EMPTY-1",
            "<system-reminder>Warning: the file exists but is shorter than the provided offset "
            "({offset}). The file has {lines} lines.</system-reminder>",
        ),
        # BASH-TIMEOUT-2: a timed-out command's message (the output so far ends in a newline;
        # ``seconds`` is the timeout in whole seconds, rounded down)
        "bash_timeout": Text("BASH-TIMEOUT-2", "{output}Command timed out after {duration}"),
        # HOOK-UPDATE-1: a hook's replacement input the schema refuses (``error``: the wrapped
        # schema text; ``issues``: that text without its ``InputValidationError: `` prefix)
        "hook_input_invalid": Text("HOOK-UPDATE-1", "{error}"),
        # BASH-VALIDATE-1: the refusals of a command with NUL and of run_in_background when
        # background tasks are off
        "bash_nul_command": Text("BASH-VALIDATE-1", "<tool_use_error>{message}</tool_use_error>"),
        "bash_background_disabled": Text(
            "BASH-VALIDATE-1", "<tool_use_error>{message}</tool_use_error>"
        ),
        # REG-DEFER-1: appended to a failed call of an MCP tool whose schema the model was
        # not shown (``schema``: the server's input schema as compact JSON)
        "deferred_schema_hint": Text("REG-DEFER-1", ""),
        # DISP-FIND-1: an unknown name; one a whole-tool deny removed; one in other case
        "unknown_tool": Text("DISP-FIND-1", "Error: No such tool available: {name}"),
        "unknown_tool_denied": Text("DISP-FIND-1", "Error: No such tool available: {name}"),
        "unknown_tool_case": Text("DISP-FIND-1", "Error: No such tool available: {name}"),
        # DISP-SCHEMA-2: T for an integer field given no number, and given a fraction
        "schema_integer_type": Text("DISP-SCHEMA-2", "integer"),
        "schema_integer_fraction": Text("DISP-SCHEMA-2", "integer"),
        # ERR-CODE-1: a validate_input refusal; READ-MISSING-1: Read's refusal of a missing file
        "refusal": Text("ERR-CODE-1", "<tool_use_error>{message}</tool_use_error>"),
        "read_missing": Text("READ-MISSING-1", "<tool_use_error>{message}</tool_use_error>"),
        # READ-SUGGEST-1: the suggestion after a missing file's message (its path, its name)
        "did_you_mean": Text("READ-SUGGEST-1", " Did you mean {path}?"),
        # DISP-SCHEMA-2: the line of a non-object input
        "schema_not_object": Text(
            "DISP-SCHEMA-2", "The input type is expected as `object` but provided as `{provided}`"
        ),
        # claude-code-latest's own texts (2.1.332)
        # TOK-GATE-2: a text read over the token cap
        "token_cap_refusal": Text(
            "TOK-GATE-2",
            "File content ({amount}) exceeds maximum allowed tokens ({cap}). Use offset and "
            "limit parameters to read specific portions of the file, or search for specific "
            "content instead of reading the whole file.",
        ),
    }
)
"""Every text a profile may render otherwise, by key."""


def fields_of(template: str) -> frozenset[str]:
    """The field names ``template`` uses."""
    return frozenset(
        name for _, name, _, _ in string.Formatter().parse(template) if name is not None
    )


def render(template: str, fields: Mapping[str, object]) -> str:
    """``template`` with ``fields`` filled in; braces in the values stay as they are."""
    return template.format_map(dict(fields))
