"""Every Hypothesis strategy the properties use, in one place.

Texts are small and built from a small alphabet so that matches, repeated
matches, line endings and quote normalization all happen often: letters,
a space and a TAB, ``\\n`` and ``\\r\\n`` (as one token, so a lone ``\\r`` is
never formed by accident), straight and curly quotes. No strategy forms a
desanitization key (TEXT-DESANITIZE-1) or a NUL.
"""

from __future__ import annotations

from typing import Final

from hypothesis import strategies as st

from conformance.instruments.properties.oracle import normalize_quotes, to_lf

__all__ = [
    "CURLY",
    "FRAME_CHARS",
    "PATHS",
    "TOKENS",
    "any_texts",
    "crlf_styles",
    "file_texts",
    "fragments",
    "framed",
    "limits",
    "mtime_moves",
    "new_strings",
    "offsets",
    "old_strings",
    "plain_old_strings",
    "plain_texts",
    "quoted_cores",
    "rarely",
    "straight_new_strings",
    "texts",
    "unique_cores",
    "with_line_endings",
    "write_contents",
]

PATHS: Final = ("a.txt", "notes.Md", "sub/c.txt")
"""The state machine's files: ``notes.Md`` keeps trailing spaces (EDIT-WS-1,
whatever the case of the extension), ``sub/`` makes Write and Edit create a
parent directory."""

CURLY: Final = "\u2018\u2019\u201c\u201d"
TOKENS: Final = ("a", "b", " ", "\t", "\n", "\r\n", "'", '"', *CURLY)

FRAME_CHARS: Final = "0123.\n"
"""Text around a fragment: no letter, space, TAB or quote, so a fragment holding
one of those occurs exactly once in ``prefix + fragment + suffix``."""


def texts(min_tokens: int = 0, max_tokens: int = 10) -> st.SearchStrategy[str]:
    """Token texts: the state machine's file contents and strings."""
    return st.lists(st.sampled_from(TOKENS), min_size=min_tokens, max_size=max_tokens).map("".join)


file_texts: Final = texts(0, 10)
new_strings: Final = texts(0, 5)
offsets: Final = st.none() | st.integers(1, 5)
limits: Final = st.none() | st.integers(1, 5)
rarely: Final = st.sampled_from((False, False, False, True))
"""True one time in four."""
mtime_moves: Final = st.sampled_from(("forward", "backward"))
"""How an external write moves the mtime: >= 2 s past every mtime the file had,
or >= 2 s before all of them (STATE-STALE-1 compares with ``!=``)."""


def fragments(text: str, max_size: int = 6) -> st.SearchStrategy[str]:
    """Non-empty pieces of ``text`` (``text`` itself must not be empty)."""
    return st.builds(
        lambda start, size: text[start : start + size],
        st.integers(0, len(text) - 1),
        st.integers(1, max_size),
    )


def old_strings(current: str | None) -> st.SearchStrategy[str]:
    """An Edit's old_string: a piece of the file's LF text (as is, or with
    straightened quotes), or any short text (often not found, or found twice)."""
    anything = texts(0, 3)
    flat = to_lf(current or "")
    if not flat:
        return anything
    pieces = fragments(flat)
    return st.one_of(pieces, pieces.map(normalize_quotes), anything)


# -- for the @given properties ------------------------------------------------

plain_texts: Final = st.text(alphabet="ab\n", max_size=24)
"""No quote, space or TAB: matching is exact and new_string is never stripped."""


def plain_old_strings(text: str) -> st.SearchStrategy[str]:
    """A non-empty old_string for ``text``: one of its pieces, or any plain text."""
    anything = plain_texts.filter(bool)
    return st.one_of(fragments(text, 4), anything) if text else anything


any_texts: Final = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=300
).filter(lambda t: not t.startswith("\ufeff"))
"""Any text a file may hold (lone ``\\r``, U+2028, form feeds…), with no NUL
(READ-BINARY-1) and no leading U+FEFF (a byte order mark, TEXT-ENC-1)."""

quoted_cores: Final = st.text(alphabet="ab ()\u2014'\"" + CURLY, min_size=1, max_size=10).filter(
    lambda t: any(q in t for q in CURLY)
)
"""A file fragment holding at least one curly quote."""

straight_new_strings: Final = st.text(alphabet="ab ()\u2014'\"", max_size=10).map(
    lambda t: t.rstrip(" ")
)
"""A one-line new_string with straight quotes and no trailing space (EDIT-WS-1)."""

crlf_styles: Final = st.sampled_from(("crlf", "lf", "mixed"))


@st.composite
def with_line_endings(draw: st.DrawFn, text: str, style: str) -> str:
    """``text`` (LF) with each ``\\n`` as ``\\r\\n`` (crlf), ``\\n`` (lf) or either (mixed)."""
    if style == "lf":
        return text
    if style == "crlf":
        return text.replace("\n", "\r\n")
    return "".join(("\r\n" if draw(st.booleans()) else "\n") if ch == "\n" else ch for ch in text)


def framed(core: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str, str]]:
    """``(prefix, core, suffix)`` with the core's text unique in the whole."""
    frame = st.text(alphabet=FRAME_CHARS, max_size=12)
    return st.tuples(frame, core, frame)


unique_cores: Final = st.text(alphabet="ab \t\n", min_size=1, max_size=12).filter(
    lambda t: t.strip("\n") != ""
)
"""A fragment with at least one letter, space or TAB (so it is unique in a frame)."""

write_contents: Final = st.one_of(
    any_texts, plain_texts.flatmap(lambda t: with_line_endings(t, "mixed"))
)
"""Write's content: any text, or lines ending in a mix of ``\\r\\n`` and ``\\n``."""
