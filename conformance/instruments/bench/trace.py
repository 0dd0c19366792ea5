"""A reproducible trace of a model's reads over a real tree, with seed 000's re-read share.

Seed 000 reports that about 18% of Reads are re-reads. A trace is a sequence
of Read and Edit calls over a snapshot of a source tree, made by
``make_trace`` from a seed: most Reads open a file (or a range of it) for the
first time; ``reread_share`` of them repeat an earlier Read of the very same
range, and a part of those (``after_edit_share``) come right after an Edit of
that file, which dedup must not answer with the stub (READ-DEDUP-3).

Each re-read is labelled with what SPEC.md lets dedup do with it, given that
the read-file state keeps one record per path, the latest (STATE-RECORD-1):

- ``reread``: the path's latest record is a Read of this range and nothing
  changed since: dedup answers with the stub (READ-DEDUP-1);
- ``reread_other_range``: unchanged, but a Read of another range came in
  between, so the record no longer matches: the content again;
- ``reread_after_edit``: right after an Edit of the file: the content again.

The generator decides from the snapshot alone, never from an implementation's
answers, so every implementation replays the same calls. Its choices:

- Files are drawn with a Zipf-like skew: a few hot files, a long tail.
- A re-read repeats a recent Read: it reaches k Reads back with probability
  ``RECENCY_P * (1 - RECENCY_P) ** k``, as a model re-reads what it is
  working on rather than something from long ago.
- A quarter of first Reads of a file longer than ``RANGE_MIN_LINES`` lines
  take a range (``offset`` and ``limit``); the rest read the whole file.
- Edits go only to files small enough that their whole Read passes the token
  gate (``EDIT_MAX_BYTES``), so the Edit always has a record to rely on. They
  append a marker to one line that occurs once in the file's current text.
- A re-read after an edit re-reads the range the trace read last.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import reference

TREE_SUFFIXES: Final = frozenset({".py", ".md", ".yaml", ".json", ".toml", ".txt"})
EDIT_MAX_BYTES: Final = 40_000
RANGE_MIN_LINES: Final = 300
SEED_REREAD_SHARE: Final = 0.18  # seed 000: "~18% DE READS SAO RE-READS"
AFTER_EDIT_SHARE: Final = 0.3  # the seeds give no figure: a guess, and an option
COSTS_READS: Final = 200
"""Reads in the trace an agent replays: its whole conversation goes with every request."""
RECENCY_P: Final = 0.2  # a re-read goes back k Reads with probability 0.2 * 0.8**k

ReadKind = Literal["first", "reread", "reread_other_range", "reread_after_edit"]
REREAD_KINDS: Final[tuple[ReadKind, ...]] = ("reread", "reread_other_range", "reread_after_edit")


@dataclass(frozen=True, slots=True)
class ReadStep:
    """One Read call. ``path`` is relative to the tree's root."""

    path: str
    offset: int | None
    limit: int | None
    kind: ReadKind


@dataclass(frozen=True, slots=True)
class EditStep:
    """One Edit call: ``old_string`` occurs exactly once in the file at that point."""

    path: str
    old_string: str
    new_string: str


Step = ReadStep | EditStep


@dataclass(frozen=True, slots=True)
class Trace:
    """A tree snapshot and the calls to replay over it."""

    files: Mapping[str, str]
    steps: tuple[Step, ...]
    seed: int

    @property
    def reads(self) -> tuple[ReadStep, ...]:
        return tuple(step for step in self.steps if isinstance(step, ReadStep))

    def count(self, kind: ReadKind) -> int:
        return sum(1 for step in self.reads if step.kind == kind)

    def materialize(self, root: Path) -> None:
        """Write the snapshot under ``root`` (created if needed), byte for byte."""
        for relative, content in self.files.items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8"))


def snapshot(roots: Iterable[Path], *, base: Path) -> dict[str, str]:
    """The UTF-8 text files under ``roots``, keyed by their path relative to ``base``.

    Caches, hidden directories and files that are not valid UTF-8 are left
    out. Keys are sorted, so the snapshot does not depend on directory order.
    """
    files: dict[str, str] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(base)
            if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
                continue
            if not path.is_file() or path.suffix not in TREE_SUFFIXES:
                continue
            try:
                files[relative.as_posix()] = path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                continue
    return dict(sorted(files.items()))


def default_tree(base: Path | None = None) -> dict[str, str]:
    """This project's own sources: the ``reference`` and ``conformance`` packages' code.

    The suite's thousand small scenario files are left out: a coding session
    reads source, and they would make most Reads tiny. ``base`` is a copy of
    the project to take them from (its ``reference`` and ``conformance``
    folders), so that runs made while the code changes replay the same trace;
    by default, the packages this process imports.
    """
    if base is None:
        packages = [Path(reference.__file__).parent, Path(__file__).resolve().parents[2]]
    else:
        packages = [base / "reference", base / "conformance"]
    files = snapshot(packages, base=packages[0].parent)
    return {path: text for path, text in files.items() if path.endswith((".py", ".md"))}


def make_trace(
    files: Mapping[str, str],
    *,
    reads: int = 1000,
    reread_share: float = SEED_REREAD_SHARE,
    after_edit_share: float = AFTER_EDIT_SHARE,
    seed: int = 0,
) -> Trace:
    """A trace of exactly ``reads`` Reads, ``round(reads * reread_share)`` of them re-reads.

    Raises:
        ValueError: an empty tree, or shares outside [0, 1).
    """
    if not files:
        raise ValueError("the tree has no file to read")
    if not (0 <= reread_share < 1 and 0 <= after_edit_share <= 1):
        raise ValueError("shares must lie in [0, 1)")
    rng = random.Random(seed)
    current = dict(files)
    paths = sorted(files)
    rng.shuffle(paths)  # the hot files are a random few, not the first in sorted order
    weights = [1 / (rank + 1) for rank in range(len(paths))]
    rereads = round(reads * reread_share)
    # Which Reads (by position) are re-reads: never the first, spread at random.
    reread_at = set(rng.sample(range(1, reads), min(rereads, reads - 1)))
    done: list[ReadStep] = []
    steps: list[Step] = []
    latest: dict[str, tuple[int | None, int | None]] = {}  # the range of each path's record
    edits = 0
    for position in range(reads):
        if position in reread_at and done:
            earlier = done[-1 - min(len(done) - 1, _recency(rng))]
            ranged = (earlier.offset, earlier.limit)
            edit = None
            if rng.random() < after_edit_share:
                edit = _edit(current, earlier.path, edits)
            kind: ReadKind
            if edit is not None:
                edits += 1
                steps.append(edit)
                kind = "reread_after_edit"
            elif latest.get(earlier.path) == ranged:
                kind = "reread"
            else:
                kind = "reread_other_range"
            step = ReadStep(earlier.path, earlier.offset, earlier.limit, kind)
        else:
            step = _first_read(rng, paths, weights, current, done)
        latest[step.path] = (step.offset, step.limit)
        done.append(step)
        steps.append(step)
    return Trace(files=dict(files), steps=tuple(steps), seed=seed)


def _recency(rng: random.Random) -> int:
    """How many Reads back a re-read reaches: geometric, mostly the last few (mean 4)."""
    return int(math.log(1.0 - rng.random()) / math.log(1.0 - RECENCY_P))


def _first_read(
    rng: random.Random,
    paths: Sequence[str],
    weights: Sequence[float],
    current: Mapping[str, str],
    done: Sequence[ReadStep],
) -> ReadStep:
    """A Read of a range no earlier Read asked for (the whole file, or a new slice)."""
    seen = {(step.path, step.offset, step.limit) for step in done}
    for _ in range(1000):
        path = rng.choices(paths, weights)[0]
        lines = current[path].count("\n") + 1
        if lines > RANGE_MIN_LINES and rng.random() < 0.25:
            limit = rng.choice((100, 200, 400))
            offset = rng.randrange(1, lines - limit + 1) if lines > limit else 1
            key: tuple[str, int | None, int | None] = (path, offset, limit)
        else:
            key = (path, None, None)
        if key not in seen:
            return ReadStep(key[0], key[1], key[2], "first")
    raise ValueError("the tree is too small for this many first Reads")


def _edit(current: dict[str, str], path: str, number: int) -> EditStep | None:
    """Append a marker to one line found once in ``path``; None when no edit is safe.

    ``current`` is updated, so later edits see this one.
    """
    text = current[path]
    if len(text.encode("utf-8")) > EDIT_MAX_BYTES:
        return None
    for line in text.split("\n"):
        stripped = line.strip()
        if len(stripped) < 12 or text.count(line) != 1 or not line.isascii():
            continue
        new_line = f"{line}  # trace edit {number}"
        current[path] = text.replace(line, new_line, 1)
        return EditStep(path, line, new_line)
    return None
