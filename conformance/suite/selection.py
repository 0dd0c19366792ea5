"""Choosing scenarios by the SPEC IDs they cite (``run --spec``, the targeted mutant runs).

A wanted ID matches a cited ID exactly, or as a case-sensitive glob when it
holds ``*``, ``?`` or ``[`` (``READ-DEDUP-*``); a scenario is selected when
any ID in its ``spec`` list matches any wanted ID.

Validating a scenario file against the schema costs about twice as much as
parsing it, so :func:`citing_filter` judges a file by its parsed YAML and
lets the loader skip the files that cite none of the wanted IDs unvalidated.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Mapping

from conformance.suite.scenario import RawFilter

__all__ = ["cites", "citing_filter"]


def _matches(spec_id: str, wanted: str) -> bool:
    if any(c in wanted for c in "*?["):
        return fnmatch.fnmatchcase(spec_id, wanted)
    return spec_id == wanted


def cites(spec: Iterable[str], wanted: Collection[str]) -> bool:
    """Whether a scenario citing ``spec`` cites one of ``wanted``."""
    return any(_matches(spec_id, w) for spec_id in spec for w in wanted)


def citing_filter(wanted: Collection[str]) -> RawFilter:
    """A loader filter keeping the files that cite one of ``wanted``.

    A file whose ``spec`` is not a list of strings is kept: only validation
    can say what is wrong with it, and a broken file must not vanish.
    """
    chosen = tuple(wanted)

    def keep(data: object) -> bool:
        spec = data.get("spec") if isinstance(data, Mapping) else None
        if not isinstance(spec, list) or not all(isinstance(s, str) for s in spec):
            return True
        return cites(spec, chosen)

    return keep
