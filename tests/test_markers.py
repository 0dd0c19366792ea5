"""Every test that starts a process or drives a browser carries the marker that says so.

The fast selection ``-m "not slow and not subprocess and not browser"`` is only
honest if no test that starts a process slips into it. An ast scan of every test
module follows what a test reaches: its body and decorators, the fixtures it
asks for, and the helpers, classes and constants of its module, of the sibling
modules it imports from (``conftest``, ``refsupport``) and of the ``conftest``
modules above it. What it looks for:

- ``subprocess``, ``StdioConnector``, ``sys.executable`` or a ``stdio:``
  implementation string: the test starts a process (``subprocess``);
- ``selenium``: the test drives Chromium (``browser``).

A test carries a marker through its module's ``pytestmark``, its class, its own
decorators, or, for the cases a parameter stands for, ``pytest.param(...,
marks=...)`` on a parametrize list or a fixture's ``params``. Type annotations
are not uses. Tests that start processes in ways the scan cannot see (a Bash
call, a hook, ``rg``) are marked by hand; this test only keeps the visible ones
from being forgotten.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

import pytest

SELF = Path(__file__).resolve()
ROOT = SELF.parent.parent
TEST_DIRS = (ROOT / "tests", ROOT / "conformance" / "instruments" / "properties")
NAMES = {"subprocess": "subprocess", "StdioConnector": "subprocess", "selenium": "browser"}


def _string_needs(text: str) -> set[str]:
    """``stdio:`` with a command after it starts one; a bare ``stdio:`` starts nothing."""
    if text.startswith("stdio:") and text[len("stdio:") :].strip():
        return {"subprocess"}
    return {"browser"} if text.startswith("selenium") else set()


def _is_sys_executable(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "executable"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def _mark_names(node: ast.expr | None, marks: dict[str, frozenset[str]]) -> frozenset[str]:
    """The marker names an expression stands for: ``pytest.mark.x``, ``pytest.mark.x(...)``,
    a list or tuple of those, or a module-level name bound to one."""
    if node is None:
        return frozenset()
    if isinstance(node, ast.Call):
        return _mark_names(node.func, marks)
    if isinstance(node, (ast.List, ast.Tuple)):
        return frozenset().union(*(_mark_names(item, marks) for item in node.elts))
    if isinstance(node, ast.Name):
        return marks.get(node.id, frozenset())
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
    ):
        return frozenset({node.attr})
    return frozenset()


def _imported_roots(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [node.module.split(".")[0]] if node.module else []
    return [alias.name.split(".")[0] for alias in node.names]


def _is_test(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return node.name.startswith("test")


def _marks_named_in(node: ast.AST) -> frozenset[str]:
    """Every ``….mark.x`` written anywhere under ``node``."""
    return frozenset(
        child.attr
        for child in ast.walk(node)
        if isinstance(child, ast.Attribute)
        and isinstance(child.value, ast.Attribute)
        and child.value.attr == "mark"
    )


def _is_pytest_param(node: ast.Call) -> bool:
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr == "param"


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
    return False


@dataclass
class Module:
    """One scanned module: its top-level definitions by name, and what it imports from siblings."""

    path: Path
    tree: ast.Module
    defs: dict[str, ast.AST] = field(default_factory=dict)
    imported: dict[str, tuple[Path, str]] = field(default_factory=dict)
    marks: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, path: Path) -> Module:
        module = cls(path, ast.parse(path.read_text("utf-8"), str(path)))
        for node in module.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                module.defs[node.name] = node
                module.marks[node.name] = _marks_named_in(node)  # a helper choosing marks
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        module.defs[target.id] = node
                        module.marks[target.id] = _mark_names(node.value, module.marks)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                sibling = path.with_name(node.module + ".py")
                if sibling.is_file():
                    for alias in node.names:
                        module.imported[alias.asname or alias.name] = (sibling, alias.name)
        return module


class Scanner:
    """What each definition reaches, memoised across modules."""

    def __init__(self) -> None:
        self._modules: dict[Path, Module] = {}
        self._reached: dict[tuple[Path, str], frozenset[str]] = {}

    def module(self, path: Path) -> Module:
        if path not in self._modules:
            self._modules[path] = Module.parse(path)
        return self._modules[path]

    def _conftests(self, path: Path) -> Iterator[Module]:
        for folder in path.parents:
            if not any(folder == top or top in folder.parents for top in TEST_DIRS):
                return
            conftest = folder / "conftest.py"
            if conftest.is_file() and conftest != path:
                yield self.module(conftest)

    def name(self, module: Module, name: str, *, fixture: bool = False) -> frozenset[str]:
        """What ``name`` reaches as seen from ``module`` (as a fixture: the conftests too)."""
        if name in module.defs:
            return self.definition(module, name)
        if name in module.imported:
            sibling, original = module.imported[name]
            return self.name(self.module(sibling), original, fixture=fixture)
        if fixture:
            for conftest in self._conftests(module.path):
                if name in conftest.defs:
                    return self.definition(conftest, name)
        return frozenset()

    def definition(self, module: Module, name: str) -> frozenset[str]:
        key = (module.path, name)
        if key not in self._reached:
            self._reached[key] = frozenset()  # a recursive helper reaches what it reaches
            self._reached[key] = self.reach(module, module.defs[name])
        return self._reached[key]

    def reach(self, module: Module, node: ast.AST) -> frozenset[str]:
        """The markers ``node`` needs, less those a ``pytest.param`` inside it carries."""
        found: set[str] = set()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            _is_fixture(node) or node.name.startswith("test")
        ):
            for arg in node.args.args + node.args.kwonlyargs:
                found |= self.name(module, arg.arg, fixture=True)
        for child, carried in self._walk(node, module.marks):
            if isinstance(child, ast.Name):
                needed = {NAMES[child.id]} if child.id in NAMES else set()
                needed |= self.name(module, child.id)
            elif isinstance(child, ast.Attribute):
                needed = {"subprocess"} if _is_sys_executable(child) else set()
                needed |= {NAMES[child.attr]} if child.attr in NAMES else set()
            elif isinstance(child, ast.Constant) and isinstance(child.value, str):
                needed = _string_needs(child.value)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                needed = {NAMES[r] for r in _imported_roots(child) if r in NAMES}
            else:
                continue
            found |= needed - carried
        return frozenset(found)

    def _walk(
        self, node: ast.AST, marks: dict[str, frozenset[str]], carried: frozenset[str] = frozenset()
    ) -> Iterator[tuple[ast.AST, frozenset[str]]]:
        """Every node under ``node`` with the markers a surrounding ``pytest.param`` carries;
        annotations are skipped."""
        if isinstance(node, ast.Call) and _is_pytest_param(node):
            given = next((k.value for k in node.keywords if k.arg == "marks"), None)
            carried = carried | _mark_names(given, marks)
        yield node, carried
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns"):
                continue
            children = value if isinstance(value, list) else [value]
            for child in children:
                if isinstance(child, ast.AST):
                    yield from self._walk(child, marks, carried)


Test = tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, frozenset[str]]


def _decorated(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, module: Module
) -> frozenset[str]:
    """The markers of the decorators, and those any ``pytest.param`` among them gives:
    a test whose parameters carry a marker has chosen the cases that need it."""
    found = frozenset().union(*(_mark_names(d, module.marks) for d in node.decorator_list))
    for decorator in node.decorator_list:
        for call in ast.walk(decorator):
            if isinstance(call, ast.Call) and _is_pytest_param(call):
                given = next((k.value for k in call.keywords if k.arg == "marks"), None)
                found |= _mark_names(given, module.marks)
    return found


def _tests(module: Module) -> Iterator[Test]:
    """Each test function or method with the markers its module, class and decorators give it."""
    top = module.marks.get("pytestmark", frozenset())
    for node in module.tree.body:
        if _is_test(node):
            yield node.name, node, top | _decorated(node, module)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            given = top | _decorated(node, module)
            for item in node.body:
                if isinstance(item, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in item.targets
                ):
                    given |= _mark_names(item.value, module.marks)
            for item in node.body:
                if _is_test(item):
                    yield f"{node.name}::{item.name}", item, given | _decorated(item, module)


def unmarked() -> dict[str, list[str]]:
    """Test id → the markers its reach needs and it does not carry."""
    scanner = Scanner()
    missing: dict[str, list[str]] = {}
    for folder in TEST_DIRS:
        for path in sorted(folder.rglob("test_*.py")):
            if path == SELF:
                continue  # it names what it looks for
            module = scanner.module(path)
            for name, node, carried in _tests(module):
                needed = scanner.reach(module, node) - carried
                if needed:
                    missing[f"{path.relative_to(ROOT)}::{name}"] = sorted(needed)
    return missing


def test_every_test_that_starts_a_process_or_a_browser_is_marked() -> None:
    assert unmarked() == {}


SAMPLES = {
    "subprocess-in-the-body": (
        "import subprocess\ndef test_a():\n    subprocess.run([])",
        "subprocess",
    ),
    "a-constant-through-a-helper": (
        "import sys\nCMD = [sys.executable]\ndef _go():\n    return CMD\ndef test_a():\n    _go()",
        "subprocess",
    ),
    "a-fixture": (
        "import pytest\n@pytest.fixture\ndef impl():\n    return 'stdio:x'\ndef test_a(impl): ...",
        "subprocess",
    ),
    "selenium": ("def test_a():\n    from selenium import webdriver", "browser"),
    "marked-by-the-module": (
        "import pytest, subprocess\npytestmark = [pytest.mark.subprocess]\n"
        "def test_a():\n    subprocess.run([])",
        "",
    ),
    "marked-by-its-param": (
        "import pytest\nP = pytest.param('stdio:x', marks=pytest.mark.subprocess)\n"
        "@pytest.mark.parametrize('i', ['direct', P])\ndef test_a(i): ...",
        "",
    ),
    "marked-per-case-by-a-helper": (
        "import pytest, subprocess\n"
        "def _marks(c):\n    return [pytest.mark.subprocess] if c else []\n"
        "@pytest.mark.parametrize('c', [pytest.param(c, marks=_marks(c)) for c in (0, 1)])\n"
        "def test_a(c):\n    if c:\n        subprocess.run([])",
        "",
    ),
    "an-unmarked-param": (
        "import pytest\n@pytest.mark.parametrize('i', ['direct', 'stdio:x'])\ndef test_a(i): ...",
        "subprocess",
    ),
    "annotations-and-docstrings-are-no-use": (
        "import subprocess\ndef test_a(p: subprocess.Popen) -> None:\n    'a subprocess'",
        "",
    ),
}


@pytest.mark.parametrize(("source", "needed"), SAMPLES.values(), ids=SAMPLES.keys())
def test_the_scan_sees_through_helpers_fixtures_and_params(
    tmp_path: Path, source: str, needed: str
) -> None:
    path = tmp_path / "test_sample.py"
    path.write_text(source + "\n", "utf-8")
    scanner = Scanner()
    module = scanner.module(path)
    [(_, node, carried)] = list(_tests(module))
    assert " ".join(sorted(scanner.reach(module, node) - carried)) == needed
