"""What the token gate costs per kind of file, and how good its fast estimate is.

TOK-ESTIMATE-1, TOK-EXACT-1/2, TOK-GATE-1 over the corpus of
``conformance.instruments.bench.corpus``, one text per kind and size (seed 0). The texts
are gated as they are, which is what a whole-file Read gates (TOK-GATE-1: the
view without line-number prefixes), so what is measured here is how the
content's kind moves the estimate and the count.

Every benchmark records in ``extra_info`` the text's estimate, its full exact
count and ``estimate_over_exact`` (below 1: the estimate undercounts), so the
JSON output (``--benchmark-json``) shows the estimate's quality per kind.

Sizes: at 16 KiB every kind's estimate is at most 4,096, under a quarter of the
25,000 cap, so the gate passes at stage one without counting; at 128 KiB every
kind's estimate (CJK's included, about 11,000) is past that quarter, so the
exact count runs. At 256 KiB every kind is over the cap: the early exit
(TOK-EXACT-2) is measured against a count to the end.
"""

from __future__ import annotations

import functools

import pytest
import tiktoken
from pytest_benchmark.fixture import BenchmarkFixture

from conformance.instruments.bench import corpus
from reference import tokens

CAP = 25_000  # TOK-CAP-1's default
STAGE_ONE_BYTES = 16 * 1024
STAGE_TWO_BYTES = 128 * 1024
OVER_CAP_BYTES = 256 * 1024

GATE_SIZES = pytest.mark.parametrize(
    "size", [STAGE_ONE_BYTES, STAGE_TWO_BYTES], ids=["16KiB", "128KiB"]
)
EVERY_KIND = pytest.mark.parametrize("kind", corpus.KINDS)


@functools.cache
def _text(kind: str, size: int) -> str:
    return corpus.generate(kind, size)


@functools.cache
def _whole_count(kind: str, size: int) -> int:
    """The count of the text in one piece, straight from tiktoken (no chunking, no stop)."""
    encoding = tiktoken.get_encoding(tokens.ENCODING_NAME)
    return len(encoding.encode_ordinary(_text(kind, size)))


def _describe(benchmark: BenchmarkFixture, kind: str, size: int) -> None:
    text = _text(kind, size)
    estimate = tokens.estimate(text)
    exact = _whole_count(kind, size)
    benchmark.extra_info.update(
        {
            "kind": kind,
            "bytes": len(text.encode("utf-8")),
            "chars": len(text),
            "estimate": estimate,
            "exact": exact,
            "estimate_over_exact": round(estimate / exact, 4),
        }
    )


@EVERY_KIND
@GATE_SIZES
def test_estimate(benchmark: BenchmarkFixture, kind: str, size: int) -> None:
    """TOK-ESTIMATE-1: UTF-16 units // 4, no tokenizer."""
    text = _text(kind, size)
    _describe(benchmark, kind, size)
    assert benchmark(tokens.estimate, text) == len(text.encode("utf-16-le")) // 8


@EVERY_KIND
@GATE_SIZES
def test_exact_count(benchmark: BenchmarkFixture, kind: str, size: int) -> None:
    """TOK-EXACT-1 to the end: the chunked count equals tiktoken's count of the whole."""
    text = _text(kind, size)
    _describe(benchmark, kind, size)
    count = benchmark(tokens.exact_count, text)
    assert count.complete
    assert count.tokens == _whole_count(kind, size)


@EVERY_KIND
@GATE_SIZES
def test_gate(benchmark: BenchmarkFixture, kind: str, size: int) -> None:
    """TOK-GATE-1: stage one alone at 16 KiB, the exact count at 128 KiB."""
    text = _text(kind, size)
    _describe(benchmark, kind, size)
    decision = benchmark(tokens.gate, text, CAP)
    benchmark.extra_info["stage"] = 1 if decision.exact is None else 2
    benchmark.extra_info["passed"] = decision.passed
    if size == STAGE_ONE_BYTES:
        assert decision.exact is None  # no exact count was made
        assert decision.passed
    else:
        assert decision.exact is not None
        assert decision.passed is (_whole_count(kind, size) <= CAP)


@EVERY_KIND
def test_over_cap_exact_count_to_the_end(benchmark: BenchmarkFixture, kind: str) -> None:
    """The full count of a 256 KiB over-cap file: what the early exit saves against."""
    text = _text(kind, OVER_CAP_BYTES)
    _describe(benchmark, kind, OVER_CAP_BYTES)
    count = benchmark(tokens.exact_count, text)
    assert count.complete
    assert count.tokens == _whole_count(kind, OVER_CAP_BYTES) > CAP


@EVERY_KIND
def test_over_cap_exact_count_early_exit(benchmark: BenchmarkFixture, kind: str) -> None:
    """TOK-EXACT-2: the count stops once it passes the cap, with a lower bound."""
    text = _text(kind, OVER_CAP_BYTES)
    _describe(benchmark, kind, OVER_CAP_BYTES)
    count = benchmark(tokens.exact_count, text, stop_above=CAP)
    benchmark.extra_info["lower_bound"] = count.tokens
    benchmark.extra_info["share_counted"] = round(
        count.tokens / _whole_count(kind, OVER_CAP_BYTES), 4
    )
    assert not count.complete
    assert CAP < count.tokens < _whole_count(kind, OVER_CAP_BYTES)


@EVERY_KIND
def test_over_cap_gate(benchmark: BenchmarkFixture, kind: str) -> None:
    """TOK-GATE-1/2: the whole gate on a 256 KiB over-cap file refuses it, counting early."""
    text = _text(kind, OVER_CAP_BYTES)
    _describe(benchmark, kind, OVER_CAP_BYTES)
    decision = benchmark(tokens.gate, text, CAP)
    assert not decision.passed
    assert decision.exact is not None
    assert not decision.exact.complete
    assert decision.exact.tokens > CAP
    benchmark.extra_info["lower_bound"] = decision.exact.tokens
