"""The link between SPEC.md and these tests, checked both ways.

Every requirement of the SPEC.md sections on errors and on the file tools
(0.4 Errors; Paths; The read-file state; Tokens; Text; Read; Write; Edit; File
history and patches; Images, PDFs and notebooks in Read) is cited by at least
one test here (``SPEC: ID, ID`` in the test's docstring), every cited ID
exists, and every test states its provenance: SPEC IDs or "Reference-defined".
"""

from __future__ import annotations

import ast
from pathlib import Path

from refsupport import ENGINE_BUGS

from conformance.suite.spec import Spec

SPEC = Path(__file__).resolve().parents[2] / "SPEC.md"
TESTS = Path(__file__).resolve().parent
IN_SCOPE = frozenset(
    {
        "Errors",
        "Paths",
        "The read-file state",
        "Tokens",
        "Text",
        "Read",
        "Write",
        "Edit",
        "File history and patches",
        "Images, PDFs and notebooks in Read",
    }
)


def spec_requirements() -> list[tuple[str, str]]:
    """Every (section title, ID) of SPEC.md; a ### section inside a ## one keeps its parent's
    title when the parent is in scope."""
    found: list[tuple[str, str]] = []
    for requirement in Spec.load(SPEC):
        top = requirement.top.title if requirement.top else ""
        sub = requirement.section.title if requirement.section else ""
        found.append((top if top in IN_SCOPE else sub, requirement.id))
    return found


def in_scope(section: str) -> bool:
    return section in IN_SCOPE


def cited_ids() -> dict[str, set[str]]:
    """Map each test function (file::name) to the SPEC IDs its docstring cites."""
    cited: dict[str, set[str]] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                doc = ast.get_docstring(node) or ""
                ids: set[str] = set()
                for line in doc.splitlines():
                    if line.startswith("SPEC: "):
                        ids |= {part.strip() for part in line[6:].split(",")}
                cited[f"{path.name}::{node.name}"] = ids
    return cited


def test_the_scope_is_found_in_the_spec() -> None:
    """SPEC: SPEC-ID-1"""
    sections = {section for section, _ in spec_requirements()}
    assert sections >= IN_SCOPE


def test_requirement_ids_are_well_formed_and_unique() -> None:
    """SPEC: SPEC-ID-1"""
    spec = Spec.load(SPEC)
    assert spec.requirements, "no requirement found in SPEC.md"
    assert spec.problems == ()


def test_every_requirement_in_scope_is_cited_by_a_test() -> None:
    """SPEC: SPEC-ID-1"""
    cited = set().union(*cited_ids().values())
    required = {rid for section, rid in spec_requirements() if in_scope(section)}
    assert sorted(required - cited) == []


def test_every_cited_id_exists_in_the_spec() -> None:
    """SPEC: SPEC-ID-1"""
    known = {rid for _, rid in spec_requirements()}
    unknown = {name: sorted(ids - known) for name, ids in cited_ids().items() if ids - known}
    assert unknown == {}


def test_every_test_states_its_provenance() -> None:
    """SPEC: SPEC-ID-1"""
    missing = []
    for path in sorted(TESTS.glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                doc = ast.get_docstring(node) or ""
                if not doc.startswith(("SPEC: ", "Reference-defined")):
                    missing.append(f"{path.name}::{node.name}")
    assert missing == []


def test_every_engine_bug_entry_names_an_existing_test() -> None:
    """Reference-defined: the ENGINE_BUGS registry of conftest.py never goes stale."""
    tests = set(cited_ids())
    assert sorted(key for key in ENGINE_BUGS if key.split("[", 1)[0] not in tests) == []
