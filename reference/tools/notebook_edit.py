"""NotebookEdit: replace, insert or delete one Jupyter notebook cell (SPEC.md, section 17.1).

The same read-before-edit and staleness gates as Edit (STATE-STALE-1,
STATE-STALE-2); the edited notebook needs a ``metadata`` object, is written
atomically and serialized as Claude Code 2.1.88 writes it: JSON indented by
one space, keys in the notebook's own order, no final newline
(NBEDIT-WRITE-1).
"""

from __future__ import annotations

import copy
import json
import re
import secrets
from collections.abc import Mapping
from typing import Any, Final, Literal, NamedTuple

from pydantic import Field

from reference import errors, fileio, history, paths, text
from reference.filestate import is_stale
from reference.permissions.session_rules import edit_rule_tools, matching_deny_rule
from reference.profiles import DOCUMENTED, Profile
from reference.tool import ResultContent, Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import (
    MODIFIED_SINCE_READ,
    NOT_READ_YET,
    UNEXPECTEDLY_MODIFIED,
    StrictInput,
    check_path_syntax,
    record_is_stale,
    record_own_write,
    refuse_symlink,
)
from reference.tools.read.notebook import language_of

NAME: Final = "NotebookEdit"
CELL_TYPE_REQUIRED: Final = "Cell type is required when using edit_mode=insert."
CELL_ID_REQUIRED: Final = "Cell ID must be specified when not inserting a new cell."
_INDEX_NAME: Final = re.compile(r"cell-([0-9]+)", re.ASCII)  # NBEDIT-CELL-1: cell-01 is cell-1
_ID_ALPHABET: Final = "0123456789abcdefghijklmnopqrstuvwxyz"  # NBEDIT-INSERT-1
_ID_LENGTH: Final = 11
_HEX_ID_LENGTH: Final = 8  # NBEDIT-INSERT-1 under claude-code-latest
NO_METADATA: Final = "The notebook has no metadata object."

CellType = Literal["code", "markdown"]
EditMode = Literal["replace", "insert", "delete"]


class NotebookEditInput(StrictInput):
    notebook_path: str = Field(description="The absolute path to the Jupyter notebook to edit")
    cell_id: str | None = Field(
        default=None,
        description=(
            "The ID of the cell to edit (or cell-N as Read shows a cell without an id). "
            "With edit_mode=insert the new cell goes after it, or first when it is left out."
        ),
    )
    new_source: str = Field(description="The new source of the cell")
    cell_type: CellType | None = Field(
        default=None, description="The cell type; required with edit_mode=insert"
    )
    edit_mode: EditMode = Field(default="replace", description="replace, insert or delete")


class _Notebook(NamedTuple):
    """A parsed notebook: the JSON object and its ``cells`` list (the same object)."""

    doc: dict[str, Any]
    cells: list[Any]


class _Edited(NamedTuple):
    """What an edit produced: the new notebook, the cell the result names (None: a cell
    the profile's release gives no name, NBEDIT-RESULT-1), its type and its old source."""

    doc: dict[str, Any]
    cell_id: str | None
    cell_type: Any
    old_source: str | None = None


def notebook_path_of(inp: NotebookEditInput, ctx: ToolUseContext) -> str | None:
    """TOOL-PATH-1: ``notebook_path``, expanded, for path rules."""
    raw = inp.notebook_path
    if paths.has_nul(raw) or paths.is_unc(raw):
        return None
    return ctx.expand(raw)


def is_destructive(inp: NotebookEditInput) -> bool:
    """TOOL-PROPS-1: deleting a cell is destructive."""
    return inp.edit_mode == "delete"


def parse_notebook(data: bytes) -> _Notebook | Literal["not-json", "no-cells"]:
    """A JSON object with a ``cells`` list, else why not (NBEDIT-VALIDATE-1 code 10)."""
    try:
        source = text.decode(data, text.detect_encoding(data), strict=True)
        doc = json.loads(source)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "not-json"
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        return "no-cells"
    return _Notebook(doc, doc["cells"])


def find_cell(cells: list[Any], cell_id: str) -> int | None:
    """NBEDIT-CELL-1: the cell whose ``id`` is ``cell_id``, else ``cell-N`` as index N."""
    for index, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("id") == cell_id:
            return index
    match = _INDEX_NAME.fullmatch(cell_id)
    if match is not None and int(match.group(1)) < len(cells):
        return int(match.group(1))
    return None


def _name_of(
    cells: list[Any], index: int, given: str | None = None, *, nameless: bool = False
) -> str | None:
    """NBEDIT-RESULT-1: ``given`` (the ``cell_id`` of the call) when the cell has an id,
    else its ``id``, else ``cell-N`` (a Decision: 2.1.88 writes ``undefined``), or None
    where ``nameless`` (the profile's release gives a cell without an id no name)."""
    cell = cells[index]
    cell_id = cell.get("id") if isinstance(cell, dict) else None
    if not isinstance(cell_id, str):
        return None if nameless else f"cell-{index}"
    return given if given is not None else cell_id


def _source_text(cell: Any) -> str:
    """A cell's source as one string (nbformat may store it as a list of lines)."""
    source = cell.get("source") if isinstance(cell, dict) else None
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _supports_ids(doc: Mapping[str, Any]) -> bool:
    """NBEDIT-INSERT-1: nbformat 4.5 or later gives cells ids."""
    major, minor = doc.get("nbformat"), doc.get("nbformat_minor")
    return type(major) is int and type(minor) is int and major == 4 and minor >= 5


def _new_id(cells: list[Any], *, hex_id: bool = False) -> str:
    """NBEDIT-INSERT-1: 11 lower-case letters and digits no other cell uses (as 2.1.88), or
    with ``hex_id`` 8 lower-case hexadecimal digits (as 2.1.332)."""
    used = {cell.get("id") for cell in cells if isinstance(cell, dict)}
    while True:
        if hex_id:
            candidate = secrets.token_hex(_HEX_ID_LENGTH // 2)
        else:
            candidate = "".join(secrets.choice(_ID_ALPHABET) for _ in range(_ID_LENGTH))
        if candidate not in used:
            return candidate


def apply_edit(
    notebook: _Notebook, inp: NotebookEditInput, profile: Profile = DOCUMENTED
) -> _Edited | None:
    """NBEDIT-REPLACE-1, NBEDIT-INSERT-1, NBEDIT-DELETE-1 on a copy; None without the cell.

    ``profile``'s release may give a replaced cell whose type changes its new type's
    fields (NBEDIT-REPLACE-1), make a new cell's id otherwise (NBEDIT-INSERT-1) and give
    a cell without an id no name (NBEDIT-RESULT-1).
    """
    nameless = profile.unnamed_cell is not None
    doc = copy.deepcopy(notebook.doc)
    cells: list[Any] = doc["cells"]
    index = None if inp.cell_id is None else find_cell(cells, inp.cell_id)
    if inp.cell_id is not None and index is None:
        return None
    if inp.edit_mode == "insert":
        assert inp.cell_type is not None  # NBEDIT-VALIDATE-1 code 5
        position = 0 if index is None else index + 1
        # NBEDIT-INSERT-1: the keys in 2.1.88's order
        cell: dict[str, Any] = {"cell_type": inp.cell_type}
        if _supports_ids(doc):
            cell["id"] = _new_id(cells, hex_id=profile.new_cell_id_hex)
        cell["source"] = inp.new_source
        cell["metadata"] = {}
        if inp.cell_type == "code":
            cell["execution_count"] = None
            cell["outputs"] = []
        cells.insert(position, cell)
        unnamed = nameless or profile.unnamed_insert_text
        return _Edited(doc, _name_of(cells, position, nameless=unnamed), inp.cell_type)
    assert index is not None  # NBEDIT-VALIDATE-1 code 6
    target = cells[index]
    name = _name_of(cells, index, inp.cell_id, nameless=nameless)
    old_source = _source_text(target)
    if inp.edit_mode == "delete":
        del cells[index]
        kind = target.get("cell_type") if isinstance(target, dict) else None
        return _Edited(doc, name, kind, old_source)
    if not isinstance(target, dict):
        raise errors.NotebookValidationError(f"Cell {index} of the notebook is not an object.")
    if target.get("cell_type") == "code":  # NBEDIT-REPLACE-1: a code cell's run is cleared
        target["execution_count"] = None
        target["outputs"] = []
    target["source"] = inp.new_source
    if inp.cell_type is not None:
        if profile.notebook_type_fields and inp.cell_type != target.get("cell_type"):
            _fields_of_type(target, inp.cell_type)
        target["cell_type"] = inp.cell_type
    return _Edited(doc, name, target.get("cell_type"), old_source)


def _fields_of_type(cell: dict[str, Any], cell_type: str) -> None:
    """NBEDIT-REPLACE-1 under claude-code-latest: a code cell has a count and outputs
    (added last), a markdown cell neither."""
    if cell_type == "code":
        cell.setdefault("execution_count", None)
        cell.setdefault("outputs", [])
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)


def check_metadata(doc: dict[str, Any]) -> None:
    """NBEDIT-WRITE-1: the notebook needs a ``metadata`` object (2.1.88 reads its language)."""
    if not isinstance(doc.get("metadata"), dict):
        raise errors.NotebookValidationError(NO_METADATA)


def serialize(doc: Mapping[str, Any], *, final_newline: bool = False) -> str:
    """NBEDIT-WRITE-1: JSON indented by 1, keys in their order, non-ASCII kept, no final
    newline (one under a profile whose release writes it)."""
    return json.dumps(doc, indent=1, ensure_ascii=False) + ("\n" if final_newline else "")


def validate_input(inp: NotebookEditInput, ctx: ToolUseContext) -> None:
    """NBEDIT-VALIDATE-1: the table of SPEC.md 17.1, in order."""
    check_path_syntax(inp.notebook_path)  # FILE-PATH-2, FILE-PATH-3 (codes 1, 2), before any I/O
    path = ctx.expand(inp.notebook_path)
    rules = edit_rule_tools(ctx.session, path)  # PERM-READDENY-1
    rule = matching_deny_rule(ctx.session, path, rules)
    if rule is not None:
        raise errors.NotebookEditDeniedError(
            f"File is covered by a deny rule in your permission settings ({rule.text}) "
            "and cannot be edited."
        )
    profile = ctx.session.profile
    if not path.endswith(".ipynb"):  # NBEDIT-VALIDATE-1: case-sensitive, as 2.1.88
        raise errors.NotANotebookError(profile.text("nbedit_not_notebook"))
    if inp.edit_mode == "insert" and inp.cell_type is None:
        raise errors.CellTypeRequiredError(CELL_TYPE_REQUIRED)
    if inp.edit_mode != "insert" and inp.cell_id is None:
        raise errors.CellIdRequiredError(CELL_ID_REQUIRED)
    st = fileio.stat(path)
    record = ctx.session.read_state.get(path)
    missing = st.kind is fileio.FileKind.MISSING
    if missing and record is None and profile.notebook_missing_unread:  # NBEDIT-VALIDATE-1
        raise errors.FileNotReadError(NOT_READ_YET)  # the record check first, as the releases
    if missing:  # READ-MISSING-1's message
        raise errors.FileDoesNotExistError(paths.file_does_not_exist_message(path, ctx.cwd))
    if st.kind is not fileio.FileKind.REGULAR:
        raise errors.FileDoesNotExistError(f"Cannot edit {path}: it is not a regular file.")
    if record is None:  # any record counts, as for Edit (EDIT-READ-1)
        raise errors.FileNotReadError(NOT_READ_YET)
    if record_is_stale(record, st.mtime_ns):  # STATE-STALE-2, first check
        raise errors.FileModifiedSinceReadError(MODIFIED_SINCE_READ)
    notebook = parse_notebook(fileio.read_bytes(path))
    if notebook == "not-json":
        raise errors.InvalidNotebookError(profile.text("nbedit_not_json"))
    if notebook == "no-cells":
        raise errors.InvalidNotebookError(profile.text("nbedit_no_cells"))
    if inp.cell_id is not None and find_cell(notebook.cells, inp.cell_id) is None:
        index_name = _INDEX_NAME.fullmatch(inp.cell_id)
        if index_name is not None:  # a cell-N past the last cell
            raise errors.CellNotFoundError(
                profile.text(
                    "nbedit_index_not_found", cell_id=inp.cell_id, index=int(index_name.group(1))
                )
            )
        raise errors.CellNotFoundError(f'Cell with ID "{inp.cell_id}" not found in notebook.')


def _unchanged_since_read(ctx: ToolUseContext, path: str, st: fileio.Stat, data: bytes) -> bool:
    record = ctx.session.read_state.get(path)
    current = text.decode(data, text.detect_encoding(data))
    return record is not None and not is_stale(record, mtime_ns=st.mtime_ns, text=current)


def call(inp: NotebookEditInput, ctx: ToolUseContext) -> ToolResult:
    """NBEDIT-WRITE-1: edit, validate, back up, then re-check and write atomically."""
    path = ctx.expand(inp.notebook_path)
    refuse_symlink(ctx, path)  # WRITE-ATOMIC-1, under a profile that refuses links
    st = fileio.stat(path)
    if st.kind is not fileio.FileKind.REGULAR:
        raise errors.FileVanishedError(f"{path} is no longer a regular file.")
    original = fileio.read_bytes(path)
    if not _unchanged_since_read(ctx, path, st, original):
        raise errors.FileUnexpectedlyModifiedError(UNEXPECTEDLY_MODIFIED)
    notebook = parse_notebook(original)
    profile = ctx.session.profile
    edited = None if isinstance(notebook, str) else apply_edit(notebook, inp, profile)
    if edited is None:  # validate_input parsed it and found the cell: it changed since
        raise errors.FileUnexpectedlyModifiedError(UNEXPECTEDLY_MODIFIED)
    check_metadata(edited.doc)  # before anything is written
    keep_newline = profile.notebook_final_newline and original.endswith(b"\n")
    new_text = serialize(edited.doc, final_newline=keep_newline)
    new_bytes = new_text.encode("utf-8")
    history.backup(ctx.session.session_dir, original)  # HIST-1

    # --- critical section: nothing between this re-check and the write ---
    with fileio.write_lock(path):  # STATE-LOCK-1: one writer at a time, across processes
        st = fileio.stat(path)
        if st.kind is not fileio.FileKind.REGULAR:
            raise errors.FileVanishedError(f"{path} is no longer a regular file.")
        current = fileio.read_bytes(path)
        if current != original or not _unchanged_since_read(ctx, path, st, current):
            raise errors.FileUnexpectedlyModifiedError(UNEXPECTEDLY_MODIFIED)  # STATE-STALE-2
        written = fileio.atomic_write(
            path, new_bytes, clean_killed=ctx.session.profile.killed_writer_cleanup
        )  # WRITE-ATOMIC-1
    # --- end of critical section ---

    record_own_write(  # NBEDIT-STATE-1 (STATE-UPDATE-1, WRITE-NOTIFY-1)
        ctx, path, text=new_text, written=written, source="edit", change="changed"
    )
    named = {} if edited.cell_id is None else {"cell_id": edited.cell_id}
    if profile.notebook_edit_output == "documented":
        return ToolResult(  # NBEDIT-RESULT-1
            data={
                "notebook_path": path,
                **named,  # always there under documented: every cell has a name
                "cell_type": edited.cell_type,
                "edit_mode": inp.edit_mode,
                "new_source": inp.new_source,
            }
        )
    old = {}  # NBEDIT-RESULT-1 under claude-code-latest: a replaced or deleted cell's source
    if profile.notebook_old_source and edited.old_source is not None:
        old = {"old_source": edited.old_source}
    return ToolResult(  # NBEDIT-RESULT-1, the releases' output
        data={
            "new_source": inp.new_source,
            **named,
            "cell_type": inp.cell_type or "code",  # the call's, not the cell's
            "language": language_of(edited.doc),
            "edit_mode": inp.edit_mode,
            "error": "",
            "notebook_path": path,
            "original_file": text.decode(original, text.detect_encoding(original)),
            "updated_file": new_text,
            **old,
        }
    )


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    """NBEDIT-RESULT-1: the text the model sees; an output without ``cell_id`` is a cell
    the profile's release gives no name."""
    name = data.get("cell_id")
    if name is None and data["edit_mode"] == "insert" and profile.unnamed_insert_text:
        return f"Inserted a new cell with {data['new_source']}"  # as 2.1.332
    if name is None:
        name = profile.unnamed_cell or ""
    if data["edit_mode"] == "delete":
        return f"Deleted cell {name}"
    verb = "Inserted" if data["edit_mode"] == "insert" else "Updated"
    return f"{verb} cell {name} with {data['new_source']}"


NOTEBOOK_EDIT_TOOL: Final[Tool[NotebookEditInput]] = build_tool(
    name=NAME,
    input_model=NotebookEditInput,
    call=call,
    validate_input=validate_input,
    description=(
        "Replaces the source of a Jupyter notebook (.ipynb) cell, inserts a new cell, "
        "or deletes a cell."
    ),
    error_codes={
        errors.InvalidPathError: 1,
        errors.UncPathError: 2,
        errors.NotebookEditDeniedError: 3,
        errors.NotANotebookError: 4,
        errors.CellTypeRequiredError: 5,
        errors.CellIdRequiredError: 6,
        errors.FileDoesNotExistError: 7,
        errors.FileNotReadError: 8,
        errors.FileModifiedSinceReadError: 9,
        errors.InvalidNotebookError: 10,
        errors.CellNotFoundError: 11,
    },
    map_result=map_result,
    is_destructive=is_destructive,  # TOOL-PROPS-1
    path_fields=("notebook_path",),
    get_path=notebook_path_of,  # TOOL-PATH-1
    path_rules="edit",  # PERM-RULE-2: Edit(path) rules govern it
    classifier_input=lambda inp: inp.notebook_path,
)
