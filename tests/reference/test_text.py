"""The pure text helpers (SPEC.md section 11): encodings, line endings, quotes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import text
from reference.text import Encoding

CURLY = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (b"\xff\xfeh\x00", Encoding.UTF16LE),
        (b"\xef\xbb\xbfhi", Encoding.UTF8_BOM),
        (b"hi", Encoding.UTF8),
        (b"", Encoding.UTF8),
        (b"\xfe\xffh\x00", Encoding.UTF8),  # a UTF-16BE mark is not one of the three
        (b"\xef\xbbhi", Encoding.UTF8),
    ],
)
def test_encoding_is_decided_by_the_byte_order_mark(data: bytes, encoding: Encoding) -> None:
    """SPEC: TEXT-ENC-1"""
    assert text.detect_encoding(data) is encoding


@pytest.mark.parametrize("encoding", list(Encoding))
def test_encode_writes_the_mark_and_decode_drops_it(encoding: Encoding) -> None:
    """SPEC: TEXT-ENC-1"""
    data = text.encode("caf\u00e9\r\n\u4e2d", encoding)
    assert data.startswith(encoding.bom)
    assert text.detect_encoding(data) is encoding
    assert text.decode(data, encoding) == "caf\u00e9\r\n\u4e2d"


def test_marks_are_the_ones_spec_names() -> None:
    """SPEC: TEXT-ENC-1"""
    assert (Encoding.UTF8.bom, Encoding.UTF8_BOM.bom, Encoding.UTF16LE.bom) == (
        b"",
        b"\xef\xbb\xbf",
        b"\xff\xfe",
    )


def test_invalid_bytes_are_replaced_unless_strict() -> None:
    """SPEC: TEXT-ENC-2"""
    assert text.decode(b"caf\xe9", Encoding.UTF8) == "caf\ufffd"
    with pytest.raises(UnicodeDecodeError):
        text.decode(b"caf\xe9", Encoding.UTF8, strict=True)
    with pytest.raises(UnicodeDecodeError):
        text.decode(b"\xff\xfea\x00b", Encoding.UTF16LE, strict=True)


@pytest.mark.parametrize(
    ("sample", "crlf"),
    [
        ("a\r\nb\r\n", True),
        ("a\nb\n", False),
        ("a\r\nb\n", False),  # a tie is LF
        ("a\r\nb\r\nc\n", True),
        ("a\nb\nc\r\n", False),
        ("", False),
        ("no newline", False),
        ("lone\rcarriage\rreturns", False),
    ],
)
def test_crlf_style_needs_more_crlf_pairs_than_lone_lf(sample: str, crlf: bool) -> None:
    """SPEC: TEXT-EOL-1"""
    assert text.is_crlf(sample) is crlf


def test_to_lf_and_to_crlf_convert_line_endings() -> None:
    """SPEC: EDIT-EOL-1, EDIT-MATCH-1"""
    assert text.to_lf("a\r\nb\nc\r\n") == "a\nb\nc\n"
    assert text.to_crlf("a\nb\n") == "a\r\nb\r\n"


def test_quote_normalization_maps_exactly_the_four_curly_quotes() -> None:
    """SPEC: TEXT-QUOTE-1"""
    assert text.normalize_quotes("\u2018a\u2019 \u201cb\u201d") == "'a' \"b\""
    others = "\u201a\u201e\u00ab\u00bb\u2032\u2033`\u00b4\uff02\uff07"
    assert text.normalize_quotes(others) == others


@settings(max_examples=200, derandomize=True, database=None)
@given(st.text(alphabet=st.sampled_from("ab '\"\n\u2018\u2019\u201c\u201d\u201a\u00ab")))
def test_quote_normalization_preserves_length_and_every_other_character(sample: str) -> None:
    """SPEC: TEXT-QUOTE-1"""
    normalized = text.normalize_quotes(sample)
    assert len(normalized) == len(sample)
    assert normalized == "".join(CURLY.get(ch, ch) for ch in sample)


@pytest.mark.parametrize(
    ("new", "matched", "expected"),
    [
        ("\"a\" 'b'", "plain", "\"a\" 'b'"),  # no curly quote in the match: unchanged
        ('"a"', "\u201cx\u201d", "\u201ca\u201d"),
        ('say "a"', "\u201cx\u201d", "say \u201ca\u201d"),
        ('("a")', "\u201c", "(\u201ca\u201d)"),
        ('["a"]', "\u201d", "[\u201ca\u201d]"),
        ('{"a"}', "\u201c", "{\u201ca\u201d}"),
        ('\u2013"a"', "\u201c", "\u2013\u201ca\u201d"),
        ('\u2014"a"', "\u201c", "\u2014\u201ca\u201d"),
        ('x\t"a"\n"b"', "\u201c", "x\t\u201ca\u201d\n\u201cb\u201d"),
        ("don't", "\u2019", "don\u2019t"),
        ("l'\u00e9t\u00e9", "\u2018", "l\u2019\u00e9t\u00e9"),  # letters beyond ASCII
        ("\u4e2d'\u6587", "\u2019", "\u4e2d\u2019\u6587"),
        ("'quoted'", "\u2019", "\u2018quoted\u2019"),
        ("5'", "\u2019", "5\u2019"),
        ("a' b", "\u2019", "a\u2019 b"),
        (" 'x", "\u2019", " \u2018x"),
        ('it\'s "x"', "\u2019", 'it\u2019s "x"'),  # double quotes not curly in the match
        ('it\'s "x"', "\u201c", "it's \u201cx\u201d"),  # single quotes not curly in the match
    ],
)
def test_quote_restoration_follows_the_file_style(new: str, matched: str, expected: str) -> None:
    """SPEC: TEXT-QUOTE-2"""
    assert text.restore_quote_style(new, matched) == expected


def test_desanitization_table_is_the_spec_table() -> None:
    """SPEC: TEXT-DESANITIZE-1"""
    assert dict(text.DESANITIZATIONS) == {
        "<fnr>": "<function_results>",
        "<n>": "<name>",
        "<o>": "<output>",
        "<e>": "<error>",
        "\n\nH:": "\n\nHuman:",
        "\n\nA:": "\n\nAssistant:",
    }


def test_desanitize_reports_the_replacements_that_applied() -> None:
    """SPEC: TEXT-DESANITIZE-1"""
    out, applied = text.desanitize("<fnr><n>x</n>\n\nH: hi")
    assert out == "<function_results><name>x</n>\n\nHuman: hi"
    assert applied == (("<fnr>", "<function_results>"), ("<n>", "<name>"), ("\n\nH:", "\n\nHuman:"))
    assert text.apply_replacements("<n> and <fnr>", applied) == "<name> and <function_results>"
    assert text.desanitize("nothing here") == ("nothing here", ())


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        ("a  \nb\t\nc", "a\nb\nc"),
        ("a \t \r\nb", "a\r\nb"),
        ("last  ", "last"),
        ("  lead", "  lead"),
        ("nbsp\u00a0\n", "nbsp\u00a0\n"),  # only spaces and tabs
        ("a\n \n", "a\n\n"),
    ],
)
def test_trailing_spaces_and_tabs_are_stripped_from_every_line(sample: str, expected: str) -> None:
    """SPEC: EDIT-WS-1"""
    assert text.strip_trailing_whitespace(sample) == expected
