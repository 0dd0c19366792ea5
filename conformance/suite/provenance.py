"""Where a scenario's rules come from, and choosing scenarios by it (PROTO-PROVENANCE-1).

Every SPEC ID has a provenance (its evidence entry, ``conformance.suite.spec``):
``documented`` (the source articles or public docs), ``measured`` (a Claude
Code release where the sources are silent) or ``decided`` (this project,
where neither fixes it). A scenario's verdict rests on every rule it cites,
so a scenario is as strong as its weakest ID: it is ``documented`` when all
its IDs are, ``decided`` when one of them is, ``measured`` otherwise. A
scenario citing an ID without a provenance has none, and no run that asks
for provenances selects it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Final

from conformance.suite.scenario import RawFilter

__all__ = ["PROVENANCES", "provenance_filter", "scenario_provenance"]

PROVENANCES: Final = ("documented", "measured", "decided")
"""From the strongest source to the weakest, the order reports give them in."""


def scenario_provenance(spec: Iterable[str], provenances: Mapping[str, str]) -> str | None:
    """The provenance of a scenario citing ``spec``: its weakest ID's; None when one has none.

    ``provenances``: SPEC ID -> its provenance (``Spec.provenances``).
    """
    found = [provenances.get(spec_id) for spec_id in spec]
    if not found or any(p not in PROVENANCES for p in found):
        return None
    return max(found, key=lambda p: PROVENANCES.index(str(p)))


def provenance_filter(chosen: Collection[str], provenances: Mapping[str, str]) -> RawFilter:
    """A loader filter keeping the files whose provenance is one of ``chosen``.

    A file whose ``spec`` is not a list of strings is kept: only validation
    can say what is wrong with it, and a broken file must not vanish.
    """
    wanted = frozenset(chosen)

    def keep(data: object) -> bool:
        spec = data.get("spec") if isinstance(data, Mapping) else None
        if not isinstance(spec, list) or not all(isinstance(s, str) for s in spec):
            return True
        return scenario_provenance(spec, provenances) in wanted

    return keep
