"""Read of Jupyter notebooks (SPEC.md section 16, NB-*) through the protocol engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from refsupport import (
    Begin,
    Call,
    assert_done,
    assert_refused,
    error_text,
    forbid_file_reads,
    record_of,
    touch_forward,
)

from reference import fileio, tokens
from reference.engine import Engine
from reference.tools.read import notebook as read_notebook

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NOTEBOOKS = FIXTURES / "notebooks"
ANALYSIS = NOTEBOOKS / "analysis.ipynb"
TOKEN_CAP_ENV = "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"
INVALID = "Notebook is not valid JSON or has no cells list."


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def write_notebook(path: Path, cells: list[Any], **doc: Any) -> Path:
    path.write_text(json.dumps({"cells": cells, "metadata": {}, **doc}), encoding="utf-8")
    return path


def code(source: Any, outputs: list[Any], **cell: Any) -> dict[str, Any]:
    return {"cell_type": "code", "source": source, "outputs": outputs, "metadata": {}, **cell}


def blocks_of(call: Call, path: Path) -> list[dict[str, Any]]:
    response = call("Read", file_path=str(path))
    assert_done(response)
    content: list[dict[str, Any]] = response["tool_result"]["content"]
    return content


# --- NB-RENDER-1, NB-OUTPUT-1 --------------------------------------------------------


def test_the_fixture_notebook_is_rendered_cell_by_cell(call: Call) -> None:
    """SPEC: NB-RENDER-1, NB-OUTPUT-1"""
    stored = json.loads(ANALYSIS.read_text(encoding="utf-8"))
    png = "".join(stored["cells"][4]["outputs"][0]["data"]["image/png"]).replace("\n", "")
    assert blocks_of(call, ANALYSIS) == [
        text(
            '<cell id="intro"><cell_type>markdown</cell_type># Analysis\n\nSums and failures.'
            '</cell id="intro">'
        ),
        text(
            '<cell id="loop">total = 0\nfor i in range(3):\n    total += i\nprint(total)'
            '</cell id="loop">'
        ),
        text("3\n"),
        text('<cell id="double">total * 2</cell id="double">'),
        text("6"),
        text('<cell id="boom">1/0</cell id="boom">'),
        text(
            "ZeroDivisionError: division by zero\n"
            "---------------------------------------------------------------------------\n"
            "ZeroDivisionError                         Traceback (most recent call last)\n"
            "Cell In[3], line 1\n----> 1 1/0\n"
            "ZeroDivisionError: division by zero"
        ),
        text('<cell id="plot">show(dot)</cell id="plot">'),
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
        text("<Figure size 4x4>"),
        text('<cell id="rawcell"><cell_type>raw</cell_type>raw text stays raw</cell id="rawcell">'),
        text('<cell id="empty"></cell id="empty">'),
    ]


def test_cells_without_an_id_are_named_by_index(call: Call) -> None:
    """SPEC: NB-RENDER-1, NB-OUTPUT-1"""
    assert blocks_of(call, NOTEBOOKS / "legacy.ipynb") == [
        text('<cell id="cell-0"><cell_type>markdown</cell_type># Old\nnotebook</cell id="cell-0">'),
        text("<cell id=\"cell-1\">print('a')\nprint('b')</cell id=\"cell-1\">"),
        text("a\nb\n"),
    ]


def test_the_structured_output_holds_the_cells_as_stored(call: Call) -> None:
    """SPEC: NB-RENDER-1"""
    output = assert_done(call("Read", file_path=str(ANALYSIS)))
    stored = json.loads(ANALYSIS.read_text(encoding="utf-8"))
    assert output == {
        "type": "notebook",
        "file": {"filePath": str(ANALYSIS), "cells": stored["cells"]},
    }


def test_outputs_give_blocks_in_order(tmp_path: Path, call: Call) -> None:
    """SPEC: NB-OUTPUT-1"""
    path = write_notebook(
        tmp_path / "out.ipynb",
        [
            code(
                "x",
                [
                    {"output_type": "stream", "name": "stderr", "text": "warn\n"},
                    {
                        "output_type": "display_data",
                        "data": {
                            "text/plain": ["<a ", "figure>"],
                            "image/jpeg": "/9j/\nAAA=\n",
                            "image/png": ["iVBO", "Rw0K\n"],
                            "image/svg+xml": "<svg/>",
                        },
                        "metadata": {},
                    },
                    {"output_type": "display_data", "data": {"text/html": "<p>x</p>"}},
                    {"output_type": "stream", "name": "stdout", "text": ""},
                    {"output_type": "execute_result", "data": {"text/plain": "42"}},
                    {"output_type": "error", "ename": "E", "evalue": "v", "traceback": []},
                    {"output_type": "clear_output"},
                ],
            )
        ],
    )
    assert blocks_of(call, path) == [
        text('<cell id="cell-0">x</cell id="cell-0">'),
        text("warn\n"),
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/AAA="},
        },
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
        },
        text("<a figure>"),
        text("42"),
        text("E: v"),
    ]


def test_ansi_sequences_are_removed_from_tracebacks(tmp_path: Path, call: Call) -> None:
    """SPEC: NB-OUTPUT-1"""
    error = {
        "output_type": "error",
        "ename": "ValueError",
        "evalue": "bad \x1b[1mvalue\x1b[0m",
        "traceback": ["\x1b[31mline one\x1b[39m", "\x1b[38;5;241mline two\x1b[0m"],
    }
    path = write_notebook(tmp_path / "err.ipynb", [code("f()", [error])])
    assert blocks_of(call, path)[1] == text("ValueError: bad value\nline one\nline two")


def test_only_code_cells_show_outputs(tmp_path: Path, call: Call) -> None:
    """SPEC: NB-OUTPUT-1, NB-RENDER-1"""
    stray = [{"output_type": "stream", "name": "stdout", "text": "hidden"}]
    cells = [
        {"cell_type": "markdown", "source": "# t", "metadata": {}, "outputs": stray},
        {"cell_type": "raw", "source": ["a", "b"], "metadata": {}, "id": "r"},
    ]
    path = write_notebook(tmp_path / "md.ipynb", cells)
    assert blocks_of(call, path) == [
        text('<cell id="cell-0"><cell_type>markdown</cell_type># t</cell id="cell-0">'),
        text('<cell id="r"><cell_type>raw</cell_type>ab</cell id="r">'),
    ]


def test_a_notebook_without_cells_has_no_blocks(tmp_path: Path, call: Call) -> None:
    """SPEC: NB-RENDER-1"""
    assert blocks_of(call, write_notebook(tmp_path / "none.ipynb", [])) == []


def test_offset_and_limit_are_ignored_for_notebooks(call: Call) -> None:
    """SPEC: IMG-DETECT-1, NB-RENDER-1"""
    response = call("Read", file_path=str(ANALYSIS), offset=3, limit=1)
    assert len(response["tool_result"]["content"]) == 12


def test_a_big_notebook_is_not_size_gated(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-DETECT-1, READ-SIZE-1, NB-RENDER-1"""
    path = write_notebook(tmp_path / "big.ipynb", [code("pass", [])], padding="x" * 300_000)
    assert len(blocks_of(call, path)) == 1


def test_the_notebook_name_is_case_insensitive(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-DETECT-1"""
    path = write_notebook(tmp_path / "UPPER.IPYNB", [code("1", [])])
    assert blocks_of(call, path) == [text('<cell id="cell-0">1</cell id="cell-0">')]


# --- NB-PARSE-1 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b'{"cells": [', b"[]", b'"cells"', b"{}", b'{"cells": {}}', b'{"cells": null}', b"\x00\x01"],
    ids=["truncated", "array", "string", "no-cells", "cells-object", "cells-null", "binary"],
)
def test_not_a_json_object_with_a_cells_list_is_invalid(
    tmp_path: Path, engine: Engine, call: Call, body: bytes
) -> None:
    """SPEC: NB-PARSE-1, STATE-UPDATE-2"""
    path = tmp_path / "bad.ipynb"
    path.write_bytes(body)
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="InvalidNotebookError")
    assert error_text(response) == INVALID
    assert record_of(engine, path) is None


@pytest.mark.parametrize("name", ["not-json.ipynb", "no-cells.ipynb"])
def test_the_broken_fixtures_are_invalid(call: Call, name: str) -> None:
    """SPEC: NB-PARSE-1"""
    response = call("Read", file_path=str(NOTEBOOKS / name))
    assert_refused(response, stage="call", name="InvalidNotebookError")


# --- NB-SIZE-1 ----------------------------------------------------------------------


def test_a_notebook_over_100_mib_is_refused_by_stat(
    tmp_path: Path, engine: Engine, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: NB-SIZE-1"""
    path = tmp_path / "huge.ipynb"
    size = 100 * 1024 * 1024 + 1
    with path.open("wb") as handle:
        handle.truncate(size)
    forbid_file_reads(monkeypatch)
    monkeypatch.setattr(fileio, "read_head", lambda _p, _n: b"\x00" * 16)
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="NotebookTooLargeError")
    assert error_text(response) == (
        f"Notebook is larger than 100 MB ({size} bytes) and cannot be read. "
        "Use Bash with jq to read specific cells."
    )
    assert record_of(engine, path) is None


def test_the_notebook_limit_is_inclusive(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: NB-SIZE-1"""
    assert read_notebook.MAX_NOTEBOOK_BYTES == 104_857_600
    path = write_notebook(tmp_path / "edge.ipynb", [])
    monkeypatch.setattr(read_notebook, "MAX_NOTEBOOK_BYTES", path.stat().st_size)
    assert_done(call("Read", file_path=str(path)))
    monkeypatch.setattr(read_notebook, "MAX_NOTEBOOK_BYTES", path.stat().st_size - 1)
    again = call("Read", file_path=str(path), offset=2)  # another view: no dedup
    assert_refused(again, stage="call", name="NotebookTooLargeError")


# --- NB-TOKENS-1 --------------------------------------------------------------------


def test_a_notebook_over_the_token_cap_is_refused(tmp_path: Path, begin: Begin) -> None:
    """SPEC: NB-TOKENS-1, TOK-GATE-2"""
    engine = begin(env={TOKEN_CAP_ENV: "20"})
    path = write_notebook(tmp_path / "long.ipynb", [code("word " * 200, [])])
    joined = '<cell id="cell-0">' + "word " * 200 + '</cell id="cell-0">'
    count = tokens.exact_count(joined, stop_above=20)
    amount = f"{count.tokens} tokens" if count.complete else f"more than {count.tokens} tokens"
    response = engine.handle(
        {
            "seq": 1,
            "cmd": "call",
            "tool_use": {"id": "toolu_1", "name": "Read", "input": {"file_path": str(path)}},
        }
    )
    assert_refused(response, stage="call", name="MaxFileReadTokenExceededError")
    assert error_text(response) == (
        f"Notebook content ({amount}) exceeds maximum allowed tokens (20). Use Bash with jq "
        f"to read specific cells, for example: jq '.cells[:20]' {path}"
    )
    assert record_of(engine, path) is None


def test_the_gate_counts_text_blocks_joined_by_newlines(
    tmp_path: Path, begin: Begin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: NB-TOKENS-1"""
    seen: list[tuple[str, int]] = []
    real_gate = tokens.gate

    def spy(value: str, cap: int) -> tokens.GateDecision:
        seen.append((value, cap))
        return real_gate(value, cap)

    monkeypatch.setattr(tokens, "gate", spy)
    engine = begin(env={TOKEN_CAP_ENV: "5000"})
    out = [{"output_type": "display_data", "data": {"image/png": "iVBORw0K", "text/plain": "p"}}]
    path = write_notebook(tmp_path / "two.ipynb", [code("a", out), code("b", [])])
    engine.handle(
        {
            "seq": 1,
            "cmd": "call",
            "tool_use": {"id": "toolu_1", "name": "Read", "input": {"file_path": str(path)}},
        }
    )
    assert seen == [
        ('<cell id="cell-0">a</cell id="cell-0">\np\n<cell id="cell-1">b</cell id="cell-1">', 5000)
    ]


# --- NB-STATE-1 ---------------------------------------------------------------------


def test_a_notebook_read_records_a_full_read(engine: Engine, call: Call) -> None:
    """SPEC: NB-STATE-1, STATE-RECORD-1"""
    assert_done(call("Read", file_path=str(ANALYSIS)))
    record = record_of(engine, ANALYSIS)
    assert record is not None
    st = ANALYSIS.stat()
    assert record.text == ANALYSIS.read_text(encoding="utf-8")
    assert (record.mtime_ns, record.size) == (st.st_mtime_ns, st.st_size)
    assert (record.offset, record.limit, record.partial, record.source) == (1, 2000, False, "read")


def test_an_unchanged_notebook_re_read_is_deduplicated(tmp_path: Path, call: Call) -> None:
    """SPEC: NB-STATE-1, READ-DEDUP-1"""
    path = write_notebook(tmp_path / "n.ipynb", [code("1", [])])
    assert_done(call("Read", file_path=str(path)))
    again = call("Read", file_path=str(path))
    assert again["outcome"]["dedup"] is True
    assert again["outcome"]["output"] == {"type": "file_unchanged", "file": {"filePath": str(path)}}
    touch_forward(path)
    assert call("Read", file_path=str(path))["outcome"]["dedup"] is False


def test_a_notebook_read_makes_it_writable(tmp_path: Path, call: Call) -> None:
    """SPEC: NB-STATE-1, WRITE-VALIDATE-1"""
    path = write_notebook(tmp_path / "w.ipynb", [code("1", [])])
    refused = call("Write", file_path=str(path), content='{"cells": []}')
    assert_refused(refused, stage="validate", code=2, name="FileNotReadError")
    assert_done(call("Read", file_path=str(path)))
    assert_done(call("Write", file_path=str(path), content='{"cells": []}'))


def test_the_recorded_text_is_decoded_as_read_decodes(
    tmp_path: Path, engine: Engine, call: Call
) -> None:
    """SPEC: NB-STATE-1, TEXT-ENC-1"""
    path = tmp_path / "bom.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"cells": [code("\u00e9", [])]}).encode())
    assert blocks_of(call, path) == [text('<cell id="cell-0">\u00e9</cell id="cell-0">')]
    record = record_of(engine, path)
    assert record is not None
    assert record.text == path.read_bytes()[3:].decode("utf-8")
