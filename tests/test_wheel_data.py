"""The wheel carries every data file of both packages, and SPEC.md, spec/ and fixtures/ too.

A data file the package-data globs miss is silently absent from an
installed ``toolconf`` (the stress harness once ran a fifth of its bypass
cases from a wheel), so the wheel is built here from the tracked files, with
the README's own build command (its "From a wheel" section: one command,
into ``dist/``), and compared with the tree.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_BESIDE = ("SPEC.md", "spec", "fixtures")
"""Repository files the build copies into ``conformance/_data`` (``setup.py``)."""

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def tracked(*paths: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--", *paths], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [line for line in listed.stdout.splitlines() if line]


def readme_build_command() -> list[str]:
    """The README's one command that builds the wheel into ``dist/``, run with this Python."""
    section = (ROOT / "README.md").read_text("utf-8").split("### From a wheel", 1)[1]
    line = next(x for x in section.splitlines() if " -m pip wheel " in x)
    argv = shlex.split(line)
    assert argv[0] == ".venv/bin/python", line
    assert "--wheel-dir" in argv, line
    assert argv[argv.index("--wheel-dir") + 1] == "dist", line
    return [sys.executable, *argv[1:], "--quiet"]


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("LOUD SKIP: not a git checkout, the tracked files are unknown")
    source = tmp_path_factory.mktemp("source")
    for name in tracked("."):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    dist = source / "dist"
    subprocess.run(readme_build_command(), cwd=source, check=True, timeout=600)
    (wheel,) = dist.glob("toolsys_reference-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_every_data_file_of_both_packages_is_in_the_wheel(wheel_names: set[str]) -> None:
    data = [
        name
        for name in tracked("conformance", "reference")
        if not name.endswith((".py", ".md")) and "/properties/" not in name
    ]
    assert len(data) > 1000  # the scenarios alone
    assert [name for name in data if name not in wheel_names] == []


def test_spec_and_fixtures_ride_along(wheel_names: set[str]) -> None:
    expected = [f"conformance/_data/{name}" for name in tracked(*SHIPPED_BESIDE)]
    assert [name for name in expected if name not in wheel_names] == []


def test_every_module_is_in_the_wheel(wheel_names: set[str]) -> None:
    modules = [n for n in tracked("conformance", "reference") if n.endswith(".py")]
    assert [name for name in modules if name not in wheel_names] == []
