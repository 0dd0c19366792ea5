"""The permission layers depend one way: the decision on the rules and the tools' checks.

The rule library (``rules``, ``bash_rules``, ``session_rules``, ``directories``,
``tool_paths``), the tools' own checks (``permissions/checks.py``) and the
tools themselves never import ``reference.permissions.decision``: a Read's
decision calls the tool's check, which must not call back into the decision.
The imports are read from the source with ``ast``, so an import inside a
function counts as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reference.permissions.session_rules import session_rules
from reference.session import Session
from reference.settings import Settings

REFERENCE = Path(__file__).resolve().parents[2] / "reference"
DECISION = "reference.permissions.decision"
RULE_LIBRARY = ("rules", "bash_rules", "session_rules", "directories", "tool_paths")
BELOW_THE_DECISION = sorted(
    [
        *(REFERENCE / "tools").rglob("*.py"),
        REFERENCE / "permissions" / "checks.py",
        *(REFERENCE / "permissions" / f"{name}.py" for name in RULE_LIBRARY),
    ]
)


def module_name(path: Path) -> str:
    parts = path.relative_to(REFERENCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module the file ``path`` imports (see :func:`imports_in`)."""
    return imports_in(path.read_text(encoding="utf-8"), module_name(path))


def imports_in(source: str, module: str) -> set[str]:
    """Every module ``source`` (the text of ``module``) imports, anywhere in it.

    ``from a import b`` counts as ``a`` and ``a.b`` (``b`` may be a module);
    relative imports are made absolute against ``module``'s package.
    """
    package = module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize(
    "source",
    [
        "import reference.permissions.decision\n",
        "from reference.permissions import decision\n",
        "from reference.permissions.decision import decide\n",
        "from ..permissions import decision\n",
        "from .decision import decide\n",
        "def f():\n    from reference.permissions.decision import decide\n",
    ],
)
def test_the_scan_sees_every_form_of_import(source: str) -> None:
    """Reference-defined: the checker sees absolute, from-package, relative and nested imports."""
    module = "reference.permissions.checks" if "from .decision" in source else "reference.tools.x"
    assert DECISION in imports_in(source, module)


def test_the_scan_covers_the_tools_and_the_checks() -> None:
    """Reference-defined: the layer tests see the tools, the checks and a real import."""
    assert REFERENCE / "permissions" / "checks.py" in BELOW_THE_DECISION
    assert REFERENCE / "tools" / "read" / "tool.py" in BELOW_THE_DECISION
    assert "reference.permissions.checks" in imported_modules(
        REFERENCE / "tools" / "read" / "tool.py"
    )


@pytest.mark.parametrize("path", BELOW_THE_DECISION, ids=module_name)
def test_no_tool_and_no_rule_module_imports_the_decision(path: Path) -> None:
    """Reference-defined: the decision uses the rules and the tools' checks, never the reverse."""
    assert DECISION not in imported_modules(path)


@pytest.mark.parametrize("name", RULE_LIBRARY)
def test_the_rule_library_imports_no_tool(name: str) -> None:
    """Reference-defined: the rules sit below the tools, which import them, not the reverse."""
    imported = imported_modules(REFERENCE / "permissions" / f"{name}.py")
    assert not [module for module in imported if module.startswith("reference.tools")]


def test_rules_are_parsed_once_per_settings(tmp_path: Path) -> None:
    """SPEC: PERM-SOURCE-1

    The memo lives on the settings object: the same settings give the same
    parsed rules, and a session given new settings sees the new rules.
    """
    settings = Settings(by_source={"session": {"permissions": {"deny": ["Read(a)", "(bad"]}}})
    session = Session.create(root=str(tmp_path), settings=settings, session_dir=str(tmp_path))
    first = session_rules(session, "deny")
    assert [rule.text for rule in first] == ["Read(a)"]
    assert session_rules(session, "deny") is first
    session.settings = Settings(by_source={"userSettings": {"permissions": {"deny": ["Edit"]}}})
    assert [(r.text, r.source) for r in session_rules(session, "deny")] == [
        ("Edit", "userSettings")
    ]
