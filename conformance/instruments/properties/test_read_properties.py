"""Read shows a text file as ``cat -n`` lines that parse back to the file's lines."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.instruments.properties import strategies as s
from conformance.instruments.properties.driver import Implementation
from conformance.instruments.properties.oracle import REMINDER, lines_of, offset_notice

pytestmark = pytest.mark.requires("read")

ROW = re.compile(r"( *)([0-9]+)\t(.*)", re.DOTALL)


@given(text=s.any_texts)
def test_read_lines_parse_back_to_the_file_lines(implementation: Implementation, text: str) -> None:
    """Each row is the line number (unpadded), a TAB and the line, in order, then the reminder.

    Line endings are ``\\n`` and ``\\r\\n`` only: a lone ``\\r``, U+2028 or a
    form feed is part of its line, and a final one starts one more, empty line.

    SPEC: READ-FORMAT-1, READ-RANGE-1, READ-RANGE-2, READ-EMPTY-1, READ-REMINDER-1, TEXT-EOL-1.
    """
    with implementation.session() as session:
        session.write_file("any.txt", text.encode("utf-8"))
        result = session.call("Read", file_path=str(session.path("any.txt")))
    assert result.done, str(result)
    lines = lines_of(text)
    if lines == [""]:
        assert result.text == offset_notice(1, 1)
        return
    assert result.text.endswith(REMINDER), f"no reminder after the view: {result.text!r}"
    rows = result.text.removesuffix(REMINDER).split("\n")
    assert len(rows) == len(lines), f"{len(rows)} rows for {len(lines)} lines: {result.text!r}"
    for number, (row, line) in enumerate(zip(rows, lines, strict=True), 1):
        parsed = ROW.fullmatch(row)
        assert parsed is not None, f"row {number} is not NUMBER TAB LINE: {row!r}"
        spaces, digits, shown = parsed.groups()
        assert int(digits) == number, f"row {number} is numbered {digits}"
        assert spaces == "", f"row {number}: number field {spaces + digits!r}"
        assert shown == line, f"row {number} shows {shown!r}, the file has {line!r}"


@pytest.mark.slow
@pytest.mark.requires("write")
@given(offset=st.integers(2, 10_000))
def test_empty_file_read_with_any_offset_is_a_full_read(
    implementation: Implementation, offset: int
) -> None:
    """An empty file read with an offset shows the notice of its one line; Write may replace it.

    SPEC: READ-EMPTY-1, READ-OFFSET-1, STATE-PARTIAL-1, WRITE-READ-1.
    """
    with implementation.session() as session:
        path = str(session.path("empty.txt"))
        session.write_file("empty.txt", b"")
        read = session.call("Read", file_path=path, offset=offset)
        assert read.done, str(read)
        assert read.text == offset_notice(offset, 1)
        write = session.call("Write", file_path=path, content="x\n")
        assert write.done, f"Write after a full read of an empty file: {write}"
