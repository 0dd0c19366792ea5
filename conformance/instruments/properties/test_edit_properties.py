"""Edit as exact string replacement: uniqueness, quote normalization, line endings.

Each example writes one file on the real disk, reads it whole through the
implementation, edits it and compares the bytes on disk with what SPEC.md
says they become. The strings are restricted so that the expectation is a
plain splice: no trailing space or TAB in ``new_string`` (EDIT-WS-1), no
quotes where matching must be exact.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance.instruments.properties import strategies as s
from conformance.instruments.properties.driver import DriverSession, Implementation, Result
from conformance.instruments.properties.oracle import is_crlf, normalize_quotes, restore_quotes

pytestmark = [pytest.mark.requires("read", "edit"), pytest.mark.slow]

NAME = "f.txt"


def read_then_edit(session: DriverSession, original: str, **edit: object) -> Result:
    """Put ``original`` on disk, Read it whole, then Edit it with ``edit``."""
    session.write_file(NAME, original.encode("utf-8"))
    path = str(session.path(NAME))
    read = session.call("Read", file_path=path)
    assert read.done, f"Read before the Edit: {read}"
    return session.call("Edit", file_path=path, **edit)


def on_disk(session: DriverSession) -> str:
    return session.path(NAME).read_bytes().decode("utf-8")


@given(parts=s.framed(s.unique_cores), new=s.plain_texts, replace_all=st.booleans())
def test_edit_replaces_exactly_the_unique_occurrence(
    implementation: Implementation,
    parts: tuple[str, str, str],
    new: str,
    replace_all: bool,
) -> None:
    """The file becomes prefix + new_string + suffix, every other byte kept.

    SPEC: EDIT-MATCH-1, EDIT-UNIQUE-1, EDIT-RESULT-1.
    """
    prefix, core, suffix = parts
    assume(core != new)
    with implementation.session() as session:
        result = read_then_edit(
            session,
            prefix + core + suffix,
            old_string=core,
            new_string=new,
            replace_all=replace_all,
        )
        assert result.done, str(result)
        assert on_disk(session) == prefix + new + suffix


@given(text=s.plain_texts, new=s.plain_texts, replace_all=st.booleans(), data=st.data())
def test_edit_counts_non_overlapping_occurrences(
    implementation: Implementation,
    text: str,
    new: str,
    replace_all: bool,
    data: st.DataObject,
) -> None:
    """None found: code 8; several without replace_all: code 9; else every one replaced.

    SPEC: EDIT-VALIDATE-1, EDIT-UNIQUE-1, EDIT-MATCH-1, STATE-UPDATE-2.
    """
    old = data.draw(s.plain_old_strings(text), label="old_string")
    assume(old != new)
    count = text.count(old)  # str.count counts non-overlapping occurrences, left to right
    with implementation.session() as session:
        result = read_then_edit(
            session, text, old_string=old, new_string=new, replace_all=replace_all
        )
        if count == 0:
            assert (result.stage, result.error_code) == ("validate", 8), str(result)
            assert on_disk(session) == text
        elif count > 1 and not replace_all:
            assert (result.stage, result.error_code) == ("validate", 9), str(result)
            assert on_disk(session) == text
        else:
            assert result.done, str(result)
            assert on_disk(session) == text.replace(old, new)


@given(parts=s.framed(s.quoted_cores), new=s.straight_new_strings)
def test_straight_quotes_match_curly_text_and_the_file_stays_curly(
    implementation: Implementation, parts: tuple[str, str, str], new: str
) -> None:
    """old_string with straight quotes finds the curly text; new_string takes its curly style.

    SPEC: TEXT-QUOTE-1, TEXT-QUOTE-2, EDIT-QUOTE-1.
    """
    prefix, core, suffix = parts
    old = normalize_quotes(core)
    assume(old != new)
    with implementation.session() as session:
        result = read_then_edit(session, prefix + core + suffix, old_string=old, new_string=new)
        assert result.done, str(result)
        replaced = restore_quotes(new, core)
        assert on_disk(session) == prefix + replaced + suffix
    for straight, curly in (("'", "\u2018\u2019"), ('"', "\u201c\u201d")):
        if any(q in core for q in curly):
            assert straight not in replaced, f"{straight} left straight in {replaced!r}"


@given(
    parts=s.framed(s.unique_cores),
    new=s.plain_texts,
    style=s.crlf_styles,
    data=st.data(),
)
def test_edit_writes_the_whole_file_in_its_majority_style(
    implementation: Implementation,
    parts: tuple[str, str, str],
    new: str,
    style: str,
    data: st.DataObject,
) -> None:
    """The edit is made on the LF text; a CRLF file comes out all CRLF, an LF one all LF.

    A CRLF ``old_string`` never matches (strings are taken as given).
    SPEC: EDIT-EOL-1, EDIT-MATCH-1, TEXT-EOL-1.
    """
    prefix, core, suffix = (data.draw(s.with_line_endings(p, style)) for p in parts)
    old_string, new_string = core.replace("\r\n", "\n"), new
    assume(old_string != new_string)
    original = prefix + core + suffix
    crlf = is_crlf(original)
    with implementation.session() as session:
        if "\n" in old_string and data.draw(st.booleans(), label="send old_string with CRLF"):
            refused = read_then_edit(
                session, original, old_string=old_string.replace("\n", "\r\n"), new_string=new
            )
            assert not refused.done, "a CRLF old_string matched"
            assert on_disk(session) == original
            return
        result = read_then_edit(session, original, old_string=old_string, new_string=new_string)
        assert result.done, str(result)
        after = on_disk(session)
    lf_result = original.replace("\r\n", "\n").replace(old_string, new_string, 1)
    assert after == (lf_result.replace("\n", "\r\n") if crlf else lf_result)
