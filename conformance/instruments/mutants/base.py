"""What a mutant is, the engine that carries its fault, and the helpers faults use.

A mutant is a deliberately broken variant of the reference engine: a name, a
one-line description, the SPEC IDs it breaks, and the fault. A fault takes one
of two forms:

- a **session fault** runs after every successful ``begin`` on one
  :class:`MutantEngine` and changes only that engine: its fresh session (read
  state, knobs, settings) or its tool pool (tools rebuilt with
  ``dataclasses.replace``). Nothing global changes, so it runs in-process;
- a **process patch** rebinds names inside the ``reference`` package, for a
  fault in a helper deep inside a tool. It is only ever applied in the
  mutant's own adapter process (``python -m conformance.instruments.mutants NAME``), so it
  cannot reach the caller, another mutant or the normal run.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Final

from conformance.errors import ConformanceError
from reference.engine import Engine
from reference.session import Session

__all__ = [
    "MUTANTS",
    "Mutant",
    "MutantEngine",
    "get_mutant",
    "process_patch",
    "rebind",
    "session_fault",
    "set_global",
    "wrap_tool",
]

SessionFault = Callable[["MutantEngine"], None]
ProcessPatch = Callable[[], None]

_NAME: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Mutant:
    """One deliberately broken variant of the reference engine."""

    name: str
    description: str
    breaks: tuple[str, ...]
    on_begin: SessionFault | None = None
    patch: ProcessPatch | None = None
    profile: str = "documented"
    """The behaviour profile its scenarios run under (PROFILE-RUN-1): a profile mutant
    plays another profile's variant under this one."""

    @property
    def scope(self) -> str:
        """``session`` (in-process, per engine) or ``process`` (its own adapter process)."""
        return "session" if self.patch is None else "process"


MUTANTS: dict[str, Mutant] = {}
"""Every registered mutant by name, in registration order."""


def _register(mutant: Mutant) -> None:
    if not _NAME.match(mutant.name):
        raise ValueError(f"mutant name {mutant.name!r} is not kebab-case")
    if mutant.name in MUTANTS:
        raise ValueError(f"mutant {mutant.name!r} is registered twice")
    if not mutant.breaks:
        raise ValueError(f"mutant {mutant.name!r} declares no SPEC IDs")
    MUTANTS[mutant.name] = mutant


def session_fault(
    name: str, description: str, *, breaks: tuple[str, ...], profile: str = "documented"
) -> Callable[[SessionFault], SessionFault]:
    """Register the decorated function as a mutant's session fault, run under ``profile``."""

    def register(fault: SessionFault) -> SessionFault:
        mutant = Mutant(
            name=name, description=description, breaks=breaks, on_begin=fault, profile=profile
        )
        _register(mutant)
        return fault

    return register


def process_patch(
    name: str, description: str, *, breaks: tuple[str, ...]
) -> Callable[[ProcessPatch], ProcessPatch]:
    """Register the decorated function as a mutant's process patch."""

    def register(patch: ProcessPatch) -> ProcessPatch:
        _register(Mutant(name=name, description=description, breaks=breaks, patch=patch))
        return patch

    return register


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``.

    Raises:
        ConformanceError: there is none.
    """
    try:
        return MUTANTS[name]
    except KeyError:
        raise ConformanceError(
            f"unknown mutant {name!r} (`python -m conformance mutants --list` names them)"
        ) from None


class MutantEngine(Engine):
    """The reference engine with one mutant's session fault applied after every ``begin``."""

    def __init__(self, mutant: Mutant) -> None:
        super().__init__()
        self.mutant = mutant
        self.carried: dict[str, Any] = {}
        """State a fault keeps across sessions of this engine."""

    @property
    def live_session(self) -> Session:
        """The open session (faults run only right after a successful ``begin``)."""
        assert self.session is not None, "no open session"
        return self.session

    def handle(self, request: object) -> dict[str, Any]:
        answer = super().handle(request)
        command = request.get("cmd") if isinstance(request, Mapping) else None
        implementation = answer.get("implementation")
        if command == "hello" and isinstance(implementation, dict):
            implementation["name"] = f"reference-mutant:{self.mutant.name}"
        elif command == "begin" and answer.get("ok") is True and self.mutant.on_begin:
            self.mutant.on_begin(self)
        return answer


def wrap_tool(engine: Engine, tool: str, member: str, wrapper: Callable[[Any], Any]) -> None:
    """Rebuild ``tool`` in this engine's pool with ``member`` replaced by ``wrapper(member)``.

    A tool a deny rule removed from the pool (REG-DENY-1) is left out: nothing to break.
    """
    engine.tools = [
        dataclasses.replace(t, **{member: wrapper(getattr(t, member))}) if t.name == tool else t
        for t in engine.tools
    ]


# -- process patches: only ever called in a mutant's own adapter process -----


def rebind(original: object, replacement: object) -> None:
    """Point every global name in ``reference`` that is bound to ``original`` at ``replacement``.

    Catches ``from module import name`` copies as well as the defining module.

    Raises:
        LookupError: nothing was bound to ``original`` (the reference moved on).
    """
    hits = 0
    for module_name, module in list(sys.modules.items()):
        if module_name != "reference" and not module_name.startswith("reference."):
            continue
        for attr, value in list(vars(module).items()):
            if value is original:
                setattr(module, attr, replacement)
                hits += 1
    if hits == 0:
        raise LookupError(f"nothing in reference is bound to {original!r}")


def set_global(module: ModuleType, name: str, value: object) -> None:
    """Replace one module's global (a constant, or one import of a helper), read at call time.

    Raises:
        LookupError: ``module`` has no such name.
    """
    if not hasattr(module, name):
        raise LookupError(f"{module.__name__} has no {name}")
    setattr(module, name, value)
