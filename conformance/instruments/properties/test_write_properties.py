"""Write puts content on disk as given (line-end blanks aside), whatever the old line endings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.instruments.properties import strategies as s
from conformance.instruments.properties.driver import Implementation

pytestmark = [pytest.mark.requires("read", "write"), pytest.mark.slow]


@given(
    content=s.write_contents,
    old=st.none() | s.plain_texts.flatmap(lambda t: s.with_line_endings(t, "crlf")),
)
def test_write_content_is_written_verbatim(
    implementation: Implementation, content: str, old: str | None
) -> None:
    """The bytes on disk are exactly the content's UTF-8, over a CRLF file or a new one.

    SPEC: WRITE-CONTENT-1, WRITE-EOL-1, WRITE-NEW-1, WRITE-READ-1, WRITE-ENC-1.
    """
    with implementation.session() as session:
        path = str(session.path("sub/w.txt"))
        if old is not None:
            session.write_file("sub/w.txt", old.encode("utf-8"))
            read = session.call("Read", file_path=path)
            assert read.done, f"Read before the Write: {read}"
        result = session.call("Write", file_path=path, content=content)
        assert result.done, str(result)
        assert session.path("sub/w.txt").read_bytes() == _written(content).encode("utf-8")


def _written(content: str) -> str:
    """WRITE-CONTENT-1's oracle: spaces and TABs before a line end (or the end) dropped."""
    return re.sub(r"[ \t]+(?=\r?\n|\Z)", "", content)
