"""NotebookEdit (SPEC.md section 17.1) through the protocol engine, on a real disk.

Notebooks are made inline. The read record comes from a Read of the notebook
(NB-STATE-1; a text Read records the same full text until notebook reads
land) or, for files a notebook Read would refuse, from a Write (WRITE-READ-1:
a Write's record counts as a read). Staleness, the file history and the
record after an edit, which NotebookEdit shares with Write and Edit, are
tested once for the three in ``test_write_family.py``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from refsupport import (
    Begin,
    Call,
    FileFacts,
    Unchanged,
    Use,
    assert_done,
    assert_refused,
    content,
    error_text,
    file_facts,
    modify_externally,
    record_of,
    with_hook_after_validate,
)

from reference import history
from reference.engine import Engine
from reference.export import strict_schema
from reference.filestate import ReadRecord
from reference.observer import Change
from reference.registry import all_base_tools
from reference.tool import ToolUseContext
from reference.tools.notebook_edit import NOTEBOOK_EDIT_TOOL, NotebookEditInput
from reference.tools.read.tool import READ_TOOL

NOT_READ_YET = "File has not been read yet. Read it first before writing to it."
NEW_ID = re.compile(r"[0-9a-z]{11}")


# --- notebooks ------------------------------------------------------------------------


def code(source: Any, cell_id: str | None = None, **extra: Any) -> dict[str, Any]:
    cell: dict[str, Any] = {
        "cell_type": "code",
        "execution_count": 3,
        "metadata": {"tags": ["keep"]},
        "outputs": [{"name": "stdout", "output_type": "stream", "text": ["out\n"]}],
        "source": source,
        **extra,
    }
    if cell_id is not None:
        cell["id"] = cell_id
    return cell


def markdown(source: Any, cell_id: str | None = None, **extra: Any) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": "markdown", "metadata": {}, "source": source, **extra}
    if cell_id is not None:
        cell["id"] = cell_id
    return cell


def raw(source: Any, cell_id: str | None = None) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": "raw", "metadata": {}, "source": source}
    if cell_id is not None:
        cell["id"] = cell_id
    return cell


NB_METADATA = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "py3"}}


def notebook(*cells: dict[str, Any], minor: int = 5) -> dict[str, Any]:
    return {"cells": list(cells), "metadata": NB_METADATA, "nbformat": 4, "nbformat_minor": minor}


def serialized(doc: Any) -> bytes:
    """A notebook as nbformat writes it (keys sorted, final newline): the files put on disk."""
    return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def written(doc: Any) -> bytes:
    """NBEDIT-WRITE-1's serialization (keys in their order, no final newline), independently."""
    return json.dumps(doc, indent=1, ensure_ascii=False).encode()


def as_on_disk(doc: Any) -> Any:
    """``doc`` with its keys in the order ``serialized`` puts them on disk."""
    return json.loads(serialized(doc))


def sample() -> dict[str, Any]:
    """An nbformat 4.5 notebook: code, markdown, code, each with an id."""
    return notebook(
        code(["import os\n", "print(1)"], "c1"),
        markdown("# Title", "m1"),
        code("x = 1", "c2"),
    )


def put(path: Path, doc: Any) -> Path:
    path.write_bytes(serialized(doc) if not isinstance(doc, bytes) else doc)
    return path


def read(call: Call, path: Path) -> None:
    assert_done(call("Read", file_path=str(path)))


def on_disk(path: Path) -> Any:
    return json.loads(path.read_bytes())


@pytest.fixture
def nb(tmp_path: Path, call: Call) -> Path:
    """The sample notebook at ``nb.ipynb``, read."""
    path = put(tmp_path / "nb.ipynb", sample())
    read(call, path)
    return path


def edit(call: Call, path: Path, **tool_input: Any) -> dict[str, Any]:
    return call("NotebookEdit", notebook_path=str(path), **tool_input)


# --- replace ----------------------------------------------------------------------------


def test_replace_sets_the_source_and_clears_a_code_cells_outputs(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-REPLACE-1, NBEDIT-CELL-1, NBEDIT-RESULT-1, NBEDIT-WRITE-1"""
    response = edit(call, nb, cell_id="c1", new_source="print(2)")
    expected = as_on_disk(sample())
    expected["cells"][0].update(source="print(2)", outputs=[], execution_count=None)
    assert nb.read_bytes() == written(expected)
    assert content(response) == "Updated cell c1 with print(2)"
    assert assert_done(response) == {
        "notebook_path": str(nb),
        "cell_id": "c1",
        "cell_type": "code",
        "edit_mode": "replace",
        "new_source": "print(2)",
    }


def test_replace_is_the_default_edit_mode(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-REPLACE-1"""
    assert assert_done(edit(call, nb, cell_id="c2", new_source="y"))["edit_mode"] == "replace"
    assert on_disk(nb)["cells"][2]["source"] == "y"


def test_replace_of_a_markdown_cell_keeps_its_type_and_adds_no_outputs(
    nb: Path, call: Call
) -> None:
    """SPEC: NBEDIT-REPLACE-1"""
    response = edit(call, nb, cell_id="m1", new_source="## Sub")
    expected = as_on_disk(sample())
    expected["cells"][1]["source"] = "## Sub"
    assert nb.read_bytes() == written(expected)
    assert assert_done(response)["cell_type"] == "markdown"


def test_replace_code_to_markdown_keeps_cleared_outputs_and_count(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-REPLACE-1"""
    response = edit(call, nb, cell_id="c1", new_source="*text*", cell_type="markdown")
    cell = on_disk(nb)["cells"][0]
    assert cell == {
        "cell_type": "markdown",
        "execution_count": None,
        "id": "c1",
        "metadata": {"tags": ["keep"]},
        "outputs": [],
        "source": "*text*",
    }
    assert assert_done(response)["cell_type"] == "markdown"


def test_replace_markdown_to_code_adds_no_outputs(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-REPLACE-1"""
    response = edit(call, nb, cell_id="m1", new_source="z = 3", cell_type="code")
    cell = on_disk(nb)["cells"][1]
    assert cell == {"cell_type": "code", "id": "m1", "metadata": {}, "source": "z = 3"}
    assert assert_done(response)["cell_type"] == "code"


def test_replace_of_a_raw_cell_without_cell_type_stays_raw(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-REPLACE-1"""
    path = put(tmp_path / "r.ipynb", notebook(raw("old", "r1")))
    read(call, path)
    assert assert_done(edit(call, path, cell_id="r1", new_source="new"))["cell_type"] == "raw"
    assert on_disk(path)["cells"] == [raw("new", "r1")]


def test_replace_leaves_every_other_cell_and_the_metadata_as_they_were(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: NBEDIT-REPLACE-1, NBEDIT-WRITE-1"""
    doc = sample()
    doc["metadata"]["custom"] = {"nested": [1, 2.5, None, True], "ü": "ß"}
    path = put(tmp_path / "nb.ipynb", doc)
    read(call, path)
    assert_done(edit(call, path, cell_id="c2", new_source="x = 2"))
    after = on_disk(path)
    assert after["metadata"] == doc["metadata"]
    assert after["cells"][:2] == doc["cells"][:2]
    assert (after["nbformat"], after["nbformat_minor"]) == (4, 5)


# --- insert -----------------------------------------------------------------------------


def test_insert_after_a_cell_adds_a_code_cell_with_a_fresh_id(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-INSERT-1, NBEDIT-RESULT-1"""
    response = edit(
        call, nb, cell_id="m1", new_source="y = 2", cell_type="code", edit_mode="insert"
    )
    cells = on_disk(nb)["cells"]
    assert [cell.get("id") for cell in cells][:2] == ["c1", "m1"]
    assert cells[3] == sample()["cells"][2]
    new = cells[2]
    assert NEW_ID.fullmatch(new["id"])
    assert new["id"] not in {"c1", "m1", "c2"}
    assert list(new.items()) == [  # the keys in 2.1.88's order
        ("cell_type", "code"),
        ("id", new["id"]),
        ("source", "y = 2"),
        ("metadata", {}),
        ("execution_count", None),
        ("outputs", []),
    ]
    assert content(response) == f"Inserted cell {new['id']} with y = 2"
    assert assert_done(response) == {
        "notebook_path": str(nb),
        "cell_id": new["id"],
        "cell_type": "code",
        "edit_mode": "insert",
        "new_source": "y = 2",
    }


def test_insert_without_cell_id_puts_a_markdown_cell_first(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-INSERT-1"""
    response = edit(call, nb, new_source="# Intro", cell_type="markdown", edit_mode="insert")
    cells = on_disk(nb)["cells"]
    assert len(cells) == 4
    assert cells[1:] == sample()["cells"]
    assert list(cells[0].items()) == [
        ("cell_type", "markdown"),
        ("id", cells[0]["id"]),
        ("source", "# Intro"),
        ("metadata", {}),
    ]
    assert NEW_ID.fullmatch(cells[0]["id"])
    assert assert_done(response)["cell_id"] == cells[0]["id"]


def test_insert_after_the_last_cell_appends(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-INSERT-1"""
    assert_done(
        edit(call, nb, cell_id="c2", new_source="end", cell_type="code", edit_mode="insert")
    )
    cells = on_disk(nb)["cells"]
    assert (len(cells), cells[-1]["source"]) == (4, "end")


def test_insert_into_an_empty_notebook(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-INSERT-1"""
    path = put(tmp_path / "e.ipynb", notebook())
    read(call, path)
    response = edit(call, path, new_source="a", cell_type="code", edit_mode="insert")
    cells = on_disk(path)["cells"]
    assert len(cells) == 1
    assert assert_done(response)["cell_id"] == cells[0]["id"]


@pytest.mark.parametrize("minor", [0, 4])
def test_insert_before_nbformat_4_5_gives_no_id_and_names_the_cell_by_index(
    tmp_path: Path, call: Call, minor: int
) -> None:
    """SPEC: NBEDIT-INSERT-1, NBEDIT-RESULT-1, NBEDIT-CELL-1"""
    doc = notebook(code("a"), code("b"), minor=minor)
    path = put(tmp_path / "old.ipynb", doc)
    read(call, path)
    response = edit(
        call, path, cell_id="cell-0", new_source="m", cell_type="markdown", edit_mode="insert"
    )
    expected = as_on_disk(doc)
    expected["cells"].insert(1, {"cell_type": "markdown", "source": "m", "metadata": {}})
    assert path.read_bytes() == written(expected)
    assert content(response) == "Inserted cell cell-1 with m"
    assert assert_done(response)["cell_id"] == "cell-1"


def test_insert_later_than_4_5_gives_an_id(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-INSERT-1"""
    path = put(tmp_path / "new.ipynb", notebook(code("a", "a1"), minor=6))
    read(call, path)
    assert_done(edit(call, path, new_source="m", cell_type="markdown", edit_mode="insert"))
    assert NEW_ID.fullmatch(on_disk(path)["cells"][0]["id"])


def test_insert_ids_never_repeat_one_in_use(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: NBEDIT-INSERT-1"""
    path = put(tmp_path / "nb.ipynb", notebook(code("a", "0000abcd")))
    read(call, path)
    path = put(tmp_path / "nb.ipynb", notebook(code("a", "0000abcd000")))
    read(call, path)
    handed = iter("0000abcd0000000abcd00012345678901")
    monkeypatch.setattr("secrets.choice", lambda _alphabet: next(handed))
    response = edit(
        call, path, cell_id="0000abcd000", new_source="b", cell_type="code", edit_mode="insert"
    )
    assert assert_done(response)["cell_id"] == "12345678901"
    assert [cell["id"] for cell in on_disk(path)["cells"]] == ["0000abcd000", "12345678901"]


# --- delete -----------------------------------------------------------------------------


def test_delete_removes_the_named_cell_and_ignores_new_source(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-DELETE-1, NBEDIT-RESULT-1"""
    response = edit(call, nb, cell_id="m1", new_source="ignored", edit_mode="delete")
    expected = as_on_disk(sample())
    del expected["cells"][1]
    assert nb.read_bytes() == written(expected)
    assert content(response) == "Deleted cell m1"
    assert assert_done(response) == {
        "notebook_path": str(nb),
        "cell_id": "m1",
        "cell_type": "markdown",
        "edit_mode": "delete",
        "new_source": "ignored",
    }


def test_delete_of_a_cell_without_id_names_it_by_index(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-DELETE-1, NBEDIT-CELL-1, NBEDIT-RESULT-1"""
    path = put(tmp_path / "old.ipynb", notebook(code("a"), code("b"), minor=4))
    read(call, path)
    response = edit(call, path, cell_id="cell-1", new_source="", edit_mode="delete")
    assert path.read_bytes() == written(as_on_disk(notebook(code("a"), minor=4)))
    assert content(response) == "Deleted cell cell-1"


def test_deleting_the_only_cell_leaves_an_empty_list(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-DELETE-1"""
    path = put(tmp_path / "one.ipynb", notebook(code("a", "a1")))
    read(call, path)
    assert_done(edit(call, path, cell_id="a1", new_source="", edit_mode="delete"))
    assert on_disk(path)["cells"] == []


# --- naming cells -----------------------------------------------------------------------


def test_cell_n_names_the_cell_at_index_n_when_no_id_matches(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-CELL-1, NBEDIT-RESULT-1"""
    path = put(tmp_path / "old.ipynb", notebook(code("a"), markdown("b"), minor=4))
    read(call, path)
    response = edit(call, path, cell_id="cell-1", new_source="B")
    assert on_disk(path)["cells"][1] == markdown("B")
    assert content(response) == "Updated cell cell-1 with B"


def test_cell_n_reaches_a_cell_that_has_an_id_and_echoes_it(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-CELL-1, NBEDIT-RESULT-1"""
    response = edit(call, nb, cell_id="cell-2", new_source="x = 9")
    assert on_disk(nb)["cells"][2]["source"] == "x = 9"
    assert content(response) == "Updated cell cell-2 with x = 9"


def test_cell_n_with_a_leading_zero_is_the_same_index(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-CELL-1"""
    path = put(tmp_path / "old.ipynb", notebook(code("a"), code("b"), minor=4))
    read(call, path)
    assert_done(edit(call, path, cell_id="cell-01", new_source="x"))
    assert on_disk(path)["cells"][1]["source"] == "x"


def test_an_id_match_wins_over_the_cell_n_index(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-CELL-1"""
    path = put(tmp_path / "nb.ipynb", notebook(code("first", "zero"), code("second", "cell-0")))
    read(call, path)
    assert_done(edit(call, path, cell_id="cell-0", new_source="changed"))
    assert [cell["source"] for cell in on_disk(path)["cells"]] == ["first", "changed"]


@pytest.mark.parametrize("cell_id", ["cell-2", "cell--1", "cell-", "cell-٠", "nope", ""])
def test_an_unknown_cell_is_refused_with_code_11(
    tmp_path: Path, call: Call, unchanged: Unchanged, cell_id: str
) -> None:
    """SPEC: NBEDIT-CELL-1, NBEDIT-VALIDATE-1"""
    path = put(tmp_path / "old.ipynb", notebook(code("a"), code("b"), minor=4))
    read(call, path)
    with unchanged():
        response = edit(call, path, cell_id=cell_id, new_source="x")
    assert_refused(response, stage="validate", code=11, name="CellNotFoundError")
    assert error_text(response) == f'Cell with ID "{cell_id}" not found in notebook.'


@pytest.mark.parametrize("mode", ["insert", "delete"])
def test_an_unknown_cell_is_refused_for_insert_and_delete(
    nb: Path, call: Call, unchanged: Unchanged, mode: str
) -> None:
    """SPEC: NBEDIT-CELL-1, NBEDIT-VALIDATE-1"""
    with unchanged():
        response = edit(call, nb, cell_id="zz", new_source="x", cell_type="code", edit_mode=mode)
    assert_refused(response, stage="validate", code=11, name="CellNotFoundError")


# --- the validate table -----------------------------------------------------------------


@pytest.mark.parametrize("bad", ["nb\x00.ipynb", "\\\\server\\share\\nb.ipynb"])
def test_path_syntax_is_refused_before_any_io(
    tmp_path: Path, call: Call, unchanged: Unchanged, bad: str
) -> None:
    """SPEC: NBEDIT-VALIDATE-1, FILE-PATH-2, FILE-PATH-3"""
    code_, name = (1, "InvalidPathError") if "\x00" in bad else (2, "UncPathError")
    with unchanged():
        response = call("NotebookEdit", notebook_path=bad, new_source="x")  # no cell_id: code 6
    assert_refused(response, stage="validate", code=code_, name=name)


@pytest.mark.parametrize("rule", ["Edit(./nb.ipynb)", "Read(*.ipynb)", "Edit(/**)"])
def test_a_deny_rule_refuses_with_code_3(
    tmp_path: Path, begin: Begin, unchanged: Unchanged, rule: str
) -> None:
    """SPEC: NBEDIT-VALIDATE-1, PERM-RULE-2, PERM-READDENY-1"""
    engine = begin(settings={"userSettings": {"permissions": {"deny": [rule]}}})
    path = put(tmp_path / "nb.ipynb", sample())
    with unchanged():
        response = engine.handle(
            {
                "seq": 1,
                "cmd": "call",
                "tool_use": {
                    "id": "t1",
                    "name": "NotebookEdit",
                    "input": {"notebook_path": str(path), "new_source": "x"},  # code 6 too
                },
            }
        )
    assert_refused(response, stage="validate", code=3, name="NotebookEditDeniedError")


@pytest.mark.parametrize("name", ["nb.txt", "nb.ipynb.bak", "nb", "nb.json"])
def test_a_path_not_ending_in_ipynb_is_refused_with_code_4(
    tmp_path: Path, call: Call, unchanged: Unchanged, name: str
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    path = put(tmp_path / name, sample())
    read(call, path)
    with unchanged():
        response = edit(call, path, new_source="x", edit_mode="insert")  # no cell_type: code 5
    assert_refused(response, stage="validate", code=4, name="NotANotebookError")
    assert error_text(response) == (
        "File must be a Jupyter notebook (.ipynb file). "
        "For editing other file types, use the Edit tool."
    )


def test_the_extension_is_compared_with_case(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    path = put(tmp_path / "NB.IPYNB", sample())
    read(call, path)
    with unchanged():
        response = edit(call, path, cell_id="c2", new_source="y")
    assert_refused(response, stage="validate", code=4, name="NotANotebookError")


def test_insert_without_cell_type_is_refused_with_code_5(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    with unchanged():
        response = edit(call, tmp_path / "missing.ipynb", new_source="x", edit_mode="insert")
    assert_refused(response, stage="validate", code=5, name="CellTypeRequiredError")
    assert error_text(response) == "Cell type is required when using edit_mode=insert."


@pytest.mark.parametrize("mode", ["replace", "delete"])
def test_replace_and_delete_without_cell_id_are_refused_with_code_6(
    tmp_path: Path, call: Call, unchanged: Unchanged, mode: str
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    with unchanged():
        response = edit(call, tmp_path / "missing.ipynb", new_source="x", edit_mode=mode)
    assert_refused(response, stage="validate", code=6, name="CellIdRequiredError")
    assert error_text(response) == "Cell ID must be specified when not inserting a new cell."


def test_a_missing_notebook_is_refused_with_code_7_and_read_missing_text(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1, READ-MISSING-1"""
    put(tmp_path / "Notes.ipynb", sample())
    with unchanged():
        response = edit(call, tmp_path / "notes.ipynb", cell_id="c1", new_source="x")
    assert_refused(response, stage="validate", code=7, name="FileDoesNotExistError")
    assert error_text(response) == (
        f"File does not exist. Note: your current working directory is {tmp_path}. "
        f"Did you mean {tmp_path / 'Notes.ipynb'}?"
    )
    assert not (tmp_path / "notes.ipynb").exists()


def test_a_directory_is_refused_with_code_7(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    (tmp_path / "dir.ipynb").mkdir()
    with unchanged():
        response = edit(call, tmp_path / "dir.ipynb", cell_id="c1", new_source="x")
    assert_refused(response, stage="validate", code=7, name="FileDoesNotExistError")


def test_a_fifo_is_refused_with_code_7_without_blocking(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1, FILE-PATH-4"""
    os.mkfifo(tmp_path / "pipe.ipynb")
    with unchanged():
        response = edit(call, tmp_path / "pipe.ipynb", cell_id="c1", new_source="x")
    assert_refused(response, stage="validate", code=7, name="FileDoesNotExistError")


def test_an_unread_notebook_is_refused_with_code_8(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    path = put(tmp_path / "nb.ipynb", sample())
    with unchanged():
        response = edit(call, path, cell_id="c1", new_source="x")
    assert_refused(response, stage="validate", code=8, name="FileNotReadError")
    assert error_text(response) == NOT_READ_YET


def test_a_read_in_another_session_does_not_count(
    tmp_path: Path, begin: Begin, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1, STATE-SESSION-1"""
    path = put(tmp_path / "nb.ipynb", sample())
    read(call, path)
    begin()
    with unchanged():
        response = edit(call, path, cell_id="c1", new_source="x")
    assert_refused(response, stage="validate", code=8, name="FileNotReadError")


def test_any_record_counts_as_a_read_even_a_partial_one(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    path = put(tmp_path / "nb.ipynb", sample())
    st = path.stat()
    assert engine.session is not None
    engine.session.read_state.set(
        str(path),
        ReadRecord(
            text=path.read_text(),
            mtime_ns=st.st_mtime_ns,
            size=st.st_size,
            offset=3,
            limit=1,
            partial=True,
            source="read",
        ),
    )
    assert_done(edit(call, path, cell_id="c2", new_source="y"))


def test_a_write_record_counts_as_a_read(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-VALIDATE-1, WRITE-READ-1"""
    path = tmp_path / "w.ipynb"
    assert_done(call("Write", file_path=str(path), content=serialized(sample()).decode()))
    assert_done(edit(call, path, cell_id="c1", new_source="z"))


@pytest.mark.parametrize(
    "data",
    [
        b"not json {",
        b"[1, 2]",
        b'"cells"',
        b'{"metadata": {}, "nbformat": 4, "nbformat_minor": 5}',
        b'{"cells": {"0": {}}}',
        b'{"cells": null}',
        b'{"cells": [], "x": "\xff"}',
        b"",
    ],
    ids=[
        "garbage",
        "array",
        "string",
        "no-cells",
        "cells-object",
        "cells-null",
        "bad-utf8",
        "empty",
    ],
)
def test_a_file_that_is_not_a_notebook_object_is_refused_with_code_10(
    tmp_path: Path, engine: Engine, call: Call, unchanged: Unchanged, data: bytes
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    path = put(tmp_path / "bad.ipynb", data)
    st = path.stat()
    assert engine.session is not None  # a record as a Write leaves (a Read may refuse it)
    engine.session.read_state.set(
        str(path),
        ReadRecord(
            text=data.decode("utf-8", errors="replace"),
            mtime_ns=st.st_mtime_ns,
            size=st.st_size,
            offset=None,
            limit=None,
            partial=False,
            source="write",
        ),
    )
    with unchanged():
        response = edit(call, path, new_source="x", cell_type="code", edit_mode="insert")
    assert_refused(response, stage="validate", code=10, name="InvalidNotebookError")
    assert error_text(response) == "Notebook is not valid JSON or has no cells list."


def test_a_written_invalid_notebook_is_refused_with_code_10(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    path = tmp_path / "w.ipynb"
    assert_done(call("Write", file_path=str(path), content='{"cells": "none"}\n'))
    with unchanged():
        response = edit(call, path, cell_id="cell-0", new_source="x")
    assert_refused(response, stage="validate", code=10, name="InvalidNotebookError")


ORDER_CASES = {
    # what fails first: (code, error_name, the input) for each adjacent pair of the table
    "deny-before-not-a-notebook": (3, "NotebookEditDeniedError", {"name": "denied.txt"}),
    "not-a-notebook-before-cell-type": (4, "NotANotebookError", {"name": "a.txt", "insert": 1}),
    "cell-type-before-existence": (5, "CellTypeRequiredError", {"name": "gone.ipynb", "insert": 1}),
    "cell-id-before-existence": (6, "CellIdRequiredError", {"name": "gone.ipynb"}),
    "existence-before-read": (7, "FileDoesNotExistError", {"name": "gone.ipynb", "cell": "c1"}),
}


@pytest.mark.parametrize("case", ORDER_CASES.values(), ids=ORDER_CASES.keys())
def test_the_first_failing_check_of_the_table_wins(
    tmp_path: Path, begin: Begin, unchanged: Unchanged, case: tuple[int, str, dict[str, Any]]
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    code_, error, setup = case
    engine = begin(settings={"userSettings": {"permissions": {"deny": ["Edit(./denied.txt)"]}}})
    tool_input: dict[str, Any] = {"notebook_path": str(tmp_path / setup["name"]), "new_source": "x"}
    if setup.get("insert"):
        tool_input["edit_mode"] = "insert"
    if "cell" in setup:
        tool_input["cell_id"] = setup["cell"]
    with unchanged():
        response = call_with(engine, tool_input)
    assert_refused(response, stage="validate", code=code_, name=error)


def test_unread_comes_before_invalid_json(tmp_path: Path, call: Call, unchanged: Unchanged) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    path = put(tmp_path / "bad.ipynb", b"garbage")
    with unchanged():
        response = edit(call, path, cell_id="c1", new_source="x")
    assert_refused(response, stage="validate", code=8, name="FileNotReadError")


def test_stale_comes_before_cell_not_found(nb: Path, call: Call, unchanged: Unchanged) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    modify_externally(nb, b"garbage")
    with unchanged():
        response = edit(call, nb, cell_id="nowhere", new_source="x")
    assert_refused(response, stage="validate", code=9, name="FileModifiedSinceReadError")


def test_invalid_json_comes_before_cell_not_found(
    tmp_path: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-VALIDATE-1"""
    path = tmp_path / "w.ipynb"
    assert_done(call("Write", file_path=str(path), content="[]"))
    with unchanged():
        response = edit(call, path, cell_id="nowhere", new_source="x")
    assert_refused(response, stage="validate", code=10, name="InvalidNotebookError")


# --- the metadata check before the write ------------------------------------------------


def test_a_notebook_without_metadata_is_not_written(
    tmp_path: Path, engine: Engine, session_dir: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-WRITE-1, STATE-UPDATE-2, ERR-CODE-2"""
    path = tmp_path / "w.ipynb"
    assert_done(call("Write", file_path=str(path), content='{"cells": []}'))
    before = record_of(engine, path)
    with unchanged():
        response = edit(call, path, new_source="x", cell_type="code", edit_mode="insert")
    assert_refused(response, stage="call", name="NotebookValidationError")
    assert error_text(response) == "The notebook has no metadata object."
    assert record_of(engine, path) is before
    assert not (session_dir / "file-history").exists()  # checked before the backup


def test_no_schema_check_markdown_attachments_stay_on_a_code_cell(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: NBEDIT-WRITE-1, NBEDIT-REPLACE-1"""
    cell = markdown("![x](attachment:x.png)", "m1", attachments={"x.png": {"image/png": "AA=="}})
    path = put(tmp_path / "nb.ipynb", notebook(cell))
    read(call, path)
    assert_done(edit(call, path, cell_id="m1", new_source="x = 1", cell_type="code"))
    after = on_disk(path)["cells"][0]
    assert (after["cell_type"], after["attachments"]) == ("code", {"x.png": {"image/png": "AA=="}})


def test_a_notebook_of_another_major_version_is_edited(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-WRITE-1"""
    doc = notebook(code("a", "a1"))
    doc["nbformat"] = 5
    path = put(tmp_path / "nb.ipynb", doc)
    read(call, path)
    assert_done(edit(call, path, cell_id="a1", new_source="b"))
    assert on_disk(path)["nbformat"] == 5


@pytest.mark.parametrize(
    "doc",
    [
        {"cells": [5], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
        {"cells": [code("a")], "metadata": [], "nbformat": 4, "nbformat_minor": -1},
    ],
    ids=["cell-not-object", "metadata-not-object"],
)
def test_malformed_notebooks_end_as_validation_errors_not_crashes(
    tmp_path: Path, engine: Engine, call: Call, unchanged: Unchanged, doc: dict[str, Any]
) -> None:
    """SPEC: NBEDIT-WRITE-1, ERR-CODE-2"""
    path = tmp_path / "w.ipynb"
    assert_done(call("Write", file_path=str(path), content=json.dumps(doc)))
    with unchanged():
        response = edit(call, path, cell_id="cell-0", new_source="b")
    assert_refused(response, stage="call", name="NotebookValidationError")


def test_validation_does_not_leak_nbformats_id_repairs(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-WRITE-1, NBEDIT-REPLACE-1"""
    doc = notebook(code("a"), code("b"))  # 4.5 without ids: nbformat.validate repairs a copy
    path = put(tmp_path / "nb.ipynb", doc)
    read(call, path)
    assert_done(edit(call, path, cell_id="cell-1", new_source="B"))
    expected = as_on_disk(notebook(code("a"), code("b")))
    expected["cells"][1].update(source="B", outputs=[], execution_count=None)
    assert path.read_bytes() == written(expected)


# --- the write ---------------------------------------------------------------------------


def test_the_file_is_json_indented_by_one_keys_in_their_order_without_final_newline(
    tmp_path: Path, call: Call
) -> None:
    """SPEC: NBEDIT-WRITE-1"""
    path = tmp_path / "nb.ipynb"
    path.write_text(
        '{"nbformat_minor": 4, "nbformat": 4, "metadata": {"z": 1, "a": "é"},\n'
        '"cells": [{"source": ["a"], "metadata": {}, "cell_type": "markdown"}]}',
        encoding="utf-8",
    )
    read(call, path)
    assert_done(edit(call, path, cell_id="cell-0", new_source="ü ✓ 𝄞"))
    assert path.read_bytes().decode("utf-8") == (
        "{\n"
        ' "nbformat_minor": 4,\n'
        ' "nbformat": 4,\n'
        ' "metadata": {\n'
        '  "z": 1,\n'
        '  "a": "é"\n'
        " },\n"
        ' "cells": [\n'
        "  {\n"
        '   "source": "ü ✓ 𝄞",\n'
        '   "metadata": {},\n'
        '   "cell_type": "markdown"\n'
        "  }\n"
        " ]\n"
        "}"
    )


def test_a_utf8_bom_notebook_is_read_and_written_as_plain_utf8(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-WRITE-1"""
    path = put(tmp_path / "nb.ipynb", b"\xef\xbb\xbf" + serialized(sample()))
    read(call, path)
    assert_done(edit(call, path, cell_id="c2", new_source="y"))
    assert path.read_bytes().startswith(b"{\n")


def test_the_file_mode_is_kept(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-WRITE-1, WRITE-ATOMIC-1"""
    nb.chmod(0o640)
    assert_done(edit(call, nb, cell_id="c2", new_source="y"))
    assert stat.S_IMODE(nb.stat().st_mode) == 0o640


def test_a_symlink_target_is_edited_and_the_link_stays(tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-WRITE-1, WRITE-ATOMIC-1"""
    target = put(tmp_path / "real.ipynb", sample())
    link = tmp_path / "link.ipynb"
    link.symlink_to(target)
    read(call, link)
    assert_done(edit(call, link, cell_id="c2", new_source="y"))
    assert link.is_symlink()
    assert on_disk(target)["cells"][2]["source"] == "y"


def test_no_temporary_file_is_left_behind(nb: Path, tmp_path: Path, call: Call) -> None:
    """SPEC: NBEDIT-WRITE-1, WRITE-ATOMIC-1"""
    assert_done(edit(call, nb, cell_id="c2", new_source="y"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.ipynb"]


def test_a_change_inside_call_after_the_backup_is_caught_by_the_second_check(
    tmp_path: Path, ctx: ToolUseContext, use: Use, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: NBEDIT-WRITE-1, STATE-STALE-2"""
    path = put(tmp_path / "nb.ipynb", sample())
    use(READ_TOOL, file_path=str(path))
    external: list[FileFacts] = []
    real_backup = history.backup

    def backup_then_change(session_dir: str, data: bytes) -> str:
        saved = real_backup(session_dir, data)
        modify_externally(path, b"{}")
        external.append(file_facts(path))
        return saved

    monkeypatch.setattr(history, "backup", backup_then_change)
    outcome = use(NOTEBOOK_EDIT_TOOL, notebook_path=str(path), cell_id="c2", new_source="mine")
    assert (outcome.stage, outcome.error_name) == ("call", "FileUnexpectedlyModifiedError")
    assert external == [file_facts(path)]


def test_a_notebook_removed_between_validate_and_call_is_not_recreated(
    tmp_path: Path, use: Use
) -> None:
    """SPEC: NBEDIT-WRITE-1"""
    path = put(tmp_path / "nb.ipynb", sample())
    use(READ_TOOL, file_path=str(path))
    racing = with_hook_after_validate(NOTEBOOK_EDIT_TOOL, path.unlink)
    outcome = use(racing, notebook_path=str(path), cell_id="c2", new_source="mine")
    assert (outcome.stage, outcome.error_name) == ("call", "FileVanishedError")
    assert not path.exists()


# --- the record and the notification ----------------------------------------------------


def test_edits_chain_without_a_new_read(nb: Path, call: Call) -> None:
    """SPEC: NBEDIT-STATE-1"""
    assert_done(edit(call, nb, cell_id="c2", new_source="y"))
    assert_done(edit(call, nb, cell_id="c1", new_source="w"))
    assert_done(edit(call, nb, cell_id="m1", new_source="", edit_mode="delete"))
    assert [cell["source"] for cell in on_disk(nb)["cells"]] == ["w", "y"]


def test_an_edit_then_an_external_change_is_stale(
    nb: Path, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-STATE-1, STATE-STALE-1"""
    assert_done(edit(call, nb, cell_id="c2", new_source="y"))
    modify_externally(nb, serialized(sample()))
    with unchanged():
        response = edit(call, nb, cell_id="c2", new_source="z")
    assert_refused(response, stage="validate", code=9, name="FileModifiedSinceReadError")


class Recorder:
    """A file-change observer that remembers what it was told."""

    def __init__(self) -> None:
        self.changes: list[tuple[str, Change]] = []

    def file_changed(self, path: str, change: Change) -> None:
        self.changes.append((path, change))


def test_observers_and_events_hear_changed(nb: Path, engine: Engine, call: Call) -> None:
    """SPEC: NBEDIT-STATE-1, WRITE-NOTIFY-1"""
    recorder = Recorder()
    assert engine.session is not None
    engine.session.observers.append(recorder)
    response = edit(call, nb, cell_id="c2", new_source="y")
    assert recorder.changes == [(str(nb), "changed")]
    events = [event for event in response["events"] if event["type"] == "file_changed"]
    assert events == [
        {
            "type": "file_changed",
            "id": response["tool_result"]["tool_use_id"],
            "path": str(nb),
            "change": "changed",
        }
    ]


def test_a_refusal_notifies_nobody_and_keeps_the_record(
    nb: Path, engine: Engine, call: Call, unchanged: Unchanged
) -> None:
    """SPEC: NBEDIT-STATE-1, STATE-UPDATE-2"""
    recorder = Recorder()
    assert engine.session is not None
    engine.session.observers.append(recorder)
    before = record_of(engine, nb)
    with unchanged():
        response = edit(call, nb, cell_id="nope", new_source="y")
    assert_refused(response, stage="validate", code=11, name="CellNotFoundError")
    assert recorder.changes == []
    assert [e for e in response["events"] if e["type"] == "file_changed"] == []
    assert record_of(engine, nb) is before


# --- paths, schema, properties, permissions ---------------------------------------------


def test_a_relative_path_is_expanded_against_the_cwd(nb: Path, call: Call) -> None:
    """SPEC: FILE-PATH-1, NBEDIT-RESULT-1"""
    response = call("NotebookEdit", notebook_path="sub/../nb.ipynb", cell_id="c2", new_source="y")
    assert assert_done(response)["notebook_path"] == str(nb)


@pytest.mark.parametrize(
    "tool_input",
    [
        {"notebook_path": "/x.ipynb", "new_source": "x", "cell_id": "a", "extra": 1},
        {"notebook_path": "/x.ipynb", "cell_id": "a"},
        {"notebook_path": "/x.ipynb", "new_source": "x", "cell_type": "raw", "edit_mode": "insert"},
        {"notebook_path": "/x.ipynb", "new_source": "x", "cell_id": "a", "edit_mode": "append"},
        {"notebook_path": "/x.ipynb", "new_source": ["x"], "cell_id": "a"},
        {"notebook_path": "/x.ipynb", "new_source": "x", "cell_id": 1},
    ],
    ids=["extra-field", "no-new-source", "raw-type", "bad-mode", "list-source", "int-cell-id"],
)
def test_the_input_schema_is_strict(call: Call, tool_input: dict[str, Any]) -> None:
    """SPEC: TOOL-SCHEMA-1"""
    response = call("NotebookEdit", **tool_input)
    assert response["outcome"]["stage"] == "input_schema"


def test_the_exported_schema_lists_the_fields_of_17_1() -> None:
    """SPEC: TOOL-SCHEMA-1, NBEDIT-VALIDATE-1"""
    schema = strict_schema(NotebookEditInput)
    assert schema["required"] == ["notebook_path", "new_source"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert set(props) == {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"}
    assert props["cell_type"]["enum"] == ["code", "markdown"]
    assert props["edit_mode"]["enum"] == ["replace", "insert", "delete"]
    assert props["edit_mode"]["default"] == "replace"


def test_the_tool_has_the_properties_of_the_table(tmp_path: Path, ctx: ToolUseContext) -> None:
    """SPEC: TOOL-PROPS-1, TOOL-PATH-1"""
    tool = NOTEBOOK_EDIT_TOOL
    assert tool in all_base_tools()
    parse = NotebookEditInput.model_validate
    base = {"notebook_path": "nb.ipynb", "new_source": "x", "cell_id": "a"}
    for mode in ("replace", "insert", "delete"):
        inp = parse({**base, "edit_mode": mode, "cell_type": "code"})
        assert tool.is_read_only(inp) is False
        assert tool.is_concurrency_safe(inp) is False
        assert tool.is_destructive(inp) is (mode == "delete")
        assert tool.classifier_input(inp) == "nb.ipynb"
    assert tool.get_path is not None
    assert tool.get_path(parse(base), ctx) == str(tmp_path / "nb.ipynb")
    assert tool.path_rules == "edit"
    assert tool.max_result_size_chars == 100_000
    assert tool.interrupt_behavior == "block"
    assert tool.check_permissions(parse(base), ctx).behavior == "passthrough"


def call_with(engine: Engine, tool_input: dict[str, Any]) -> dict[str, Any]:
    return engine.handle(
        {
            "seq": 1,
            "cmd": "call",
            "tool_use": {"id": "t", "name": "NotebookEdit", "input": tool_input},
        }
    )


def test_an_edit_allow_rule_lets_it_run_without_asking(tmp_path: Path, begin: Begin) -> None:
    """SPEC: PERM-RULE-2, NBEDIT-STATE-1"""
    engine = begin(
        prompt="deny", settings={"userSettings": {"permissions": {"allow": ["Edit(*.ipynb)"]}}}
    )
    path = put(tmp_path / "nb.ipynb", sample())
    assert (
        engine.handle(
            {
                "seq": 0,
                "cmd": "call",
                "tool_use": {"id": "r", "name": "Read", "input": {"file_path": str(path)}},
            }
        )["outcome"]["stage"]
        == "done"
    )
    response = call_with(engine, {"notebook_path": str(path), "cell_id": "c2", "new_source": "y"})
    assert_done(response)
    assert [e for e in response["events"] if e["type"] == "permission_request"] == []


def test_without_a_rule_the_user_is_asked_and_a_no_leaves_the_file(
    tmp_path: Path, begin: Begin, unchanged: Unchanged
) -> None:
    """SPEC: PERM-RULE-2, NBEDIT-WRITE-1"""
    engine = begin(prompt="deny")
    path = put(tmp_path / "nb.ipynb", sample())
    engine.handle(
        {
            "seq": 0,
            "cmd": "call",
            "tool_use": {"id": "r", "name": "Read", "input": {"file_path": str(path)}},
        }
    )
    with unchanged():
        response = call_with(
            engine, {"notebook_path": str(path), "cell_id": "c2", "new_source": "y"}
        )
    assert response["outcome"]["stage"] == "permission"
    assert [e["tool"] for e in response["events"] if e["type"] == "permission_request"] == [
        "NotebookEdit"
    ]


def test_a_specifier_rule_on_notebook_edit_never_matches(
    tmp_path: Path, begin: Begin, unchanged: Unchanged
) -> None:
    """SPEC: PERM-RULE-2"""
    engine = begin(
        prompt="deny",
        settings={"userSettings": {"permissions": {"allow": ["NotebookEdit(*.ipynb)"]}}},
    )
    path = put(tmp_path / "nb.ipynb", sample())
    engine.handle(
        {
            "seq": 0,
            "cmd": "call",
            "tool_use": {"id": "r", "name": "Read", "input": {"file_path": str(path)}},
        }
    )
    with unchanged():
        response = call_with(
            engine, {"notebook_path": str(path), "cell_id": "c2", "new_source": "y"}
        )
    assert response["outcome"]["stage"] == "permission"


def test_the_engine_claims_the_feature(engine: Engine) -> None:
    """SPEC: PROTO-FEATURES-1"""
    hello = engine.handle({"seq": 9, "cmd": "hello", "protocol": 1})
    assert "notebook_edit" in hello["features"]
