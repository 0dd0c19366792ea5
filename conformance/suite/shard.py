"""One part of a run spread over several machines or CI jobs (``run --shard K/N``).

The scenarios a run selects are sorted by id, and shard K of N takes every
Nth of them, starting at the Kth: the same ids on every machine, whatever
order the files are found in, and shares that differ in size by one at most.
A shard judges its share in the run's own order. ``toolconf merge`` puts the
shards' reports back together; it knows each shard's share from the whole
selection's ids, which every shard's report carries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Shard"]

_FORM = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ValueError(f"shard {self.index}/{self.count}: K/N needs 1 <= K <= N")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N``, as ``--shard`` takes it.

        Raises:
            ValueError: not two whole numbers with 1 <= K <= N.
        """
        found = _FORM.match(text)
        if found is None:
            raise ValueError(f"{text!r} is not K/N (shard K of N, as in 2/5)")
        return cls(int(found[1]), int(found[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def positions(self, ids: Sequence[str]) -> list[int]:
        """The positions in ``ids`` (a run's whole selection, in its order) this shard takes,
        in that order. Equal ids are told apart by their positions."""
        ranked = sorted(range(len(ids)), key=lambda i: (ids[i], i))
        return sorted(ranked[self.index - 1 :: self.count])

    def share(self, ids: Sequence[str]) -> list[str]:
        """The ids of ``ids`` this shard takes, in their order."""
        return [ids[i] for i in self.positions(ids)]
