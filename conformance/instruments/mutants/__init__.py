"""Mutants: deliberately broken variants of the reference engine.

Each mutant is a small named fault that declares the SPEC IDs it breaks:
``session_faults`` change one engine's session or tool pool,
``process_patches`` rebind helpers inside ``reference``. ``python -m
conformance mutants`` runs the whole scenario suite against every one and
fails if any survives. ``mutant:NAME`` names one as an implementation wherever
``--impl`` or ``connect`` is accepted: a session fault runs in-process
(``DirectConnector``), a process patch in its own adapter process (``python -m
conformance.instruments.mutants NAME``), so its patch never reaches the caller.
"""

from __future__ import annotations

import sys

from conformance.instruments.mutants import pipeline_faults as _pipeline_faults  # noqa: F401  (registers)
from conformance.instruments.mutants import process_patches as _process_patches  # noqa: F401  (registers)
from conformance.instruments.mutants import profile_faults as _profile_faults  # noqa: F401  (registers)
from conformance.instruments.mutants import session_faults as _session_faults  # noqa: F401  (registers)
from conformance.instruments.mutants import tool_faults as _tool_faults  # noqa: F401  (registers)
from conformance.instruments.mutants.base import MUTANTS, Mutant, MutantEngine, get_mutant
from conformance.peers.direct import DirectConnector
from conformance.peers.stdio import StdioConnector
from conformance.wire.connector import Connector, ConnectorOptions

__all__ = ["MUTANTS", "Mutant", "MutantEngine", "adapter_argv", "connect", "get_mutant"]


def adapter_argv(name: str) -> list[str]:
    """The command of the stdio adapter that serves mutant ``name`` with its patch applied."""
    return [sys.executable, "-m", "conformance.instruments.mutants", name]


def connect(rest: str, options: ConnectorOptions) -> Connector:
    """The connector factory of ``mutant:NAME``.

    Raises:
        ConformanceError: no mutant is called ``rest``.
    """
    mutant = get_mutant(rest)
    description = f"mutant:{mutant.name}"
    if mutant.patch is None:
        return DirectConnector(
            lambda: MutantEngine(mutant), description=description, options=options
        )
    return StdioConnector(adapter_argv(mutant.name), description=description, options=options)
