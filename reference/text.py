"""Text helpers: encodings, line endings, quote normalization, desanitization.

All functions are pure; they are the shared vocabulary of Read, Write and Edit
(SPEC.md, section 11).
"""

from __future__ import annotations

import enum
import re
from typing import Final

# TEXT-QUOTE-1: the four curly quotes and their straight forms; 1:1, length-preserving.
LEFT_SINGLE: Final = "\u2018"
RIGHT_SINGLE: Final = "\u2019"
LEFT_DOUBLE: Final = "\u201c"
RIGHT_DOUBLE: Final = "\u201d"
_QUOTE_TABLE: Final = str.maketrans(
    {LEFT_SINGLE: "'", RIGHT_SINGLE: "'", LEFT_DOUBLE: '"', RIGHT_DOUBLE: '"'}
)
_OPENING_CONTEXT: Final = frozenset("([{\u2013\u2014")

# TEXT-DESANITIZE-1, in the seeds' order.
DESANITIZATIONS: Final[tuple[tuple[str, str], ...]] = (
    ("<fnr>", "<function_results>"),
    ("<n>", "<name>"),
    ("<o>", "<output>"),
    ("<e>", "<error>"),
    ("\n\nH:", "\n\nHuman:"),
    ("\n\nA:", "\n\nAssistant:"),
)

_TRAILING_WS: Final = re.compile(r"[ \t]+(?=\r?\n|$)")


class Encoding(enum.Enum):
    """TEXT-ENC-1: the encodings a file is written back in."""

    UTF8 = "utf-8"
    UTF8_BOM = "utf-8-sig"
    UTF16LE = "utf-16le"

    @property
    def bom(self) -> bytes:
        return {Encoding.UTF8: b"", Encoding.UTF8_BOM: b"\xef\xbb\xbf"}.get(self, b"\xff\xfe")


def detect_encoding(data: bytes) -> Encoding:
    """TEXT-ENC-1: decided by the byte order mark alone."""
    if data.startswith(b"\xff\xfe"):
        return Encoding.UTF16LE
    if data.startswith(b"\xef\xbb\xbf"):
        return Encoding.UTF8_BOM
    return Encoding.UTF8


def decode(data: bytes, encoding: Encoding, *, strict: bool = False) -> str:
    """Decode without the byte order mark.

    Raises:
        UnicodeDecodeError: only when ``strict`` and the bytes are invalid.
    """
    body = data[len(encoding.bom) :] if data.startswith(encoding.bom) else data
    codec = "utf-16-le" if encoding is Encoding.UTF16LE else "utf-8"
    return body.decode(codec, errors="strict" if strict else "replace")


def encode(text: str, encoding: Encoding, *, bom: bool = True) -> bytes:
    """Encode in ``encoding``, led by its byte order mark unless ``bom`` is false.

    Edit keeps the mark (EDIT-ENC-1); Write (WRITE-ENC-1) and an Edit that fills
    an empty file (EDIT-CREATE-1) leave it out.
    """
    codec = "utf-16-le" if encoding is Encoding.UTF16LE else "utf-8"
    return (encoding.bom if bom else b"") + text.encode(codec)


def is_crlf(text: str) -> bool:
    """TEXT-EOL-1: CRLF when ``\\r\\n`` pairs outnumber lone ``\\n``."""
    crlf = text.count("\r\n")
    return crlf > text.count("\n") - crlf


def to_lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def to_crlf(text_lf: str) -> str:
    """Turn every ``\\n`` of LF text into ``\\r\\n`` (EDIT-EOL-1)."""
    return text_lf.replace("\n", "\r\n")


def normalize_quotes(text: str) -> str:
    """TEXT-QUOTE-1."""
    return text.translate(_QUOTE_TABLE)


def restore_quote_style(new_string: str, matched: str) -> str:
    """TEXT-QUOTE-2: give ``new_string`` the curly style of the matched file text."""
    curly_double = LEFT_DOUBLE in matched or RIGHT_DOUBLE in matched
    curly_single = LEFT_SINGLE in matched or RIGHT_SINGLE in matched
    if not (curly_double or curly_single):
        return new_string
    out: list[str] = []
    for i, ch in enumerate(new_string):
        prev = new_string[i - 1] if i > 0 else ""
        nxt = new_string[i + 1] if i + 1 < len(new_string) else ""
        opening = prev == "" or prev.isspace() or prev in _OPENING_CONTEXT
        if ch == '"' and curly_double:
            out.append(LEFT_DOUBLE if opening else RIGHT_DOUBLE)
        elif ch == "'" and curly_single:
            # str.isalpha() is exactly Unicode category L (\p{L}).
            if prev.isalpha() and nxt.isalpha():
                out.append(RIGHT_SINGLE)
            else:
                out.append(LEFT_SINGLE if opening else RIGHT_SINGLE)
        else:
            out.append(ch)
    return "".join(out)


def desanitize(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """TEXT-DESANITIZE-1: the desanitized text and the replacements that applied."""
    applied = tuple((src, dst) for src, dst in DESANITIZATIONS if src in text)
    for src, dst in applied:
        text = text.replace(src, dst)
    return text, applied


def apply_replacements(text: str, replacements: tuple[tuple[str, str], ...]) -> str:
    for src, dst in replacements:
        text = text.replace(src, dst)
    return text


def strip_trailing_whitespace(text: str) -> str:
    """EDIT-WS-1: drop spaces and tabs at the end of every line."""
    return _TRAILING_WS.sub("", text)


def keeps_trailing_whitespace(file_path: str) -> bool:
    """EDIT-WS-1 and WRITE-CONTENT-1: Markdown (``.md``, ``.mdx``, any case) keeps it."""
    return file_path.lower().endswith((".md", ".mdx"))
