"""Build hook: the wheel carries the repository's ``SPEC.md``, ``spec/`` and ``fixtures/``.

They live at the repository root, outside the ``conformance`` package, yet
``toolconf lint`` reads SPEC.md with its evidence and annexes (``spec/``), and
the scenarios expand ``{fixtures}`` to the hook scripts, images, PDFs and
notebooks. ``build_py`` copies them into ``conformance/_data/`` of the build,
where ``conformance.suite.registry`` looks
first, so an installed wheel passes its own suite from any directory. The
sdist carries them too (``MANIFEST.in``), so a wheel built from it does as well.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("SPEC.md", "spec", "fixtures")


class BuildWithData(build_py):
    """``build_py``, then SPEC.md, spec/ and fixtures/ copied into ``conformance/_data``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # an editable install reads them from the checkout itself
        target = Path(self.build_lib, "conformance", "_data")
        target.mkdir(parents=True, exist_ok=True)
        for name in SHIPPED:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(
                    source,
                    target / name,
                    dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                )
            else:
                shutil.copy2(source, target / name)


setup(cmdclass={"build_py": BuildWithData})
