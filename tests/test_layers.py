"""Both packages are layered one way: no import circle and no arrow that points up.

``conformance/`` is one folder per layer, lowest first: ``wire`` (protocol v1),
``suite`` (the scenario model, steps, expectations, the SPEC model), ``run``
(the runner, sandboxes, results), ``peers`` (connectors and every peer kind),
``analysis`` (reports, fidelity, matrix, lint) and ``instruments`` (bench,
reliability, mutants, properties). The base modules ``errors``, ``interrupts`` and
``trees`` sit under every layer; the package face, the CLI and the pytest plugin above
them all. ``reference/`` has its core modules, then ``permissions/``, the
tools, the pipeline that runs them, and the front doors.

A module may import its own layer and the layers below, never one above, and
never its own package's face (``import conformance`` inside ``conformance``).
No module imports a private name (``_x``, or a module ``_m``) from outside its
own package. Imports are read with ``ast``, inside functions and
``TYPE_CHECKING`` blocks too, so a deferred import cannot hide an arrow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1]

CONFORMANCE_LAYERS: Final[Mapping[str, int]] = {
    "errors": 0,
    "interrupts": 0,
    "trees": 0,
    "wire": 1,
    "suite": 2,
    "run": 3,
    "peers": 4,
    "analysis": 5,
    "instruments": 6,
}
CONFORMANCE_TOP: Final = frozenset(
    {"__init__", "__main__", "cli", "commands", "pytest_plugin", "claude_code", "mcp"}
)
"""The package face, the command line and the parts its commands share with the pytest
plugin, the plugin, and the two ``python -m`` shims."""
CONFORMANCE_STANDALONE: Final = frozenset({"adapter_template"})
"""A file users copy: it imports neither package."""

REFERENCE_LAYERS: Final[Mapping[str, int]] = {
    "permissions": 1,
    "tools": 2,
    "hooks": 3,
    "dispatch": 3,
    "scheduler": 3,
    "registry": 3,
    "mcp": 3,
    "mcp_test_server": 3,
    "engine": 4,
    "api": 4,
    "adapter": 4,
    "mcp_server": 4,
    "protocol_server": 4,
}
"""Every other top-level module of ``reference`` is core (layer 0)."""
TOP: Final = 9


@dataclass(frozen=True, slots=True)
class Module:
    name: str
    path: Path

    @property
    def package(self) -> str:
        parts = self.name.split(".")
        return self.name if self.path.name == "__init__.py" else ".".join(parts[:-1])


def modules(package: str) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = Module(name, path)
    return found


def imports(module: Module, known: Mapping[str, Module]) -> Iterator[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import in ``module``'s source."""
    for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full, None) if full in known else (base, alias.name)


def rank(name: str) -> int | None:
    """The layer of a module of either package; None for a standalone module."""
    parts = name.split(".")
    if parts[0] == "conformance":
        if len(parts) == 1 or parts[1] in CONFORMANCE_TOP:
            return TOP
        if parts[1] in CONFORMANCE_STANDALONE:
            return None
        return CONFORMANCE_LAYERS[parts[1]]
    if len(parts) == 1:
        return TOP
    return REFERENCE_LAYERS.get(parts[1], 0)


def graph(package: str) -> tuple[dict[str, Module], dict[str, set[str]]]:
    known = modules(package)
    edges = {
        name: {target for target, _ in imports(module, known) if target in known} - {name}
        for name, module in known.items()
    }
    return known, edges


@pytest.mark.parametrize("package", ["conformance", "reference"])
def test_every_module_has_a_layer(package: str) -> None:
    known, _ = graph(package)
    unplaced = []
    for name in known:
        parts = name.split(".")
        if package == "conformance" and len(parts) > 1:
            top = parts[1]
            if top not in {*CONFORMANCE_LAYERS, *CONFORMANCE_TOP, *CONFORMANCE_STANDALONE}:
                unplaced.append(name)
    assert unplaced == []


@pytest.mark.parametrize("package", ["conformance", "reference"])
def test_no_arrow_points_up(package: str) -> None:
    _, edges = graph(package)
    upward = [
        f"{name} (layer {rank(name)}) imports {target} (layer {rank(target)})"
        for name, targets in edges.items()
        for target in sorted(targets)
        if (mine := rank(name)) is not None
        and (theirs := rank(target)) is not None
        and theirs > mine
    ]
    assert upward == []


@pytest.mark.parametrize("package", ["conformance", "reference"])
def test_no_circle(package: str) -> None:
    _, edges = graph(package)
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name)
    assert circles == []


def test_standalone_modules_import_neither_package() -> None:
    known = modules("conformance")
    for name in CONFORMANCE_STANDALONE:
        module = known[f"conformance.{name}"]
        found = [target for target, _ in imports(module, known)]
        assert not [t for t in found if t.split(".")[0] in {"conformance", "reference"}]


def test_reference_never_imports_conformance() -> None:
    known = modules("reference")
    found = [
        f"{name} imports {target}"
        for name, module in known.items()
        for target, _ in imports(module, known)
        if target.split(".")[0] == "conformance"
    ]
    assert found == []


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@pytest.mark.parametrize("package", ["conformance", "reference"])
def test_no_private_name_crosses_a_package(package: str) -> None:
    known = modules(package)
    crossings = []
    for name, module in known.items():
        for target, attribute in imports(module, known):
            if target.split(".")[0] not in {"conformance", "reference"}:
                continue
            owner = known[target].package if target in known else target
            private_module = any(_private(part) for part in target.split(".")[1:])
            private_name = attribute is not None and _private(attribute)
            if (private_module or private_name) and owner != module.package:
                crossings.append(f"{name} imports {target}{'.' + attribute if attribute else ''}")
    assert crossings == []
