"""The README's library example, run exactly as printed (after ``<!-- library-example -->``).

Also a script, so that CI runs the same check against an installed wheel from
another directory: ``python tests/test_readme_example.py [README.md]``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"<!-- library-example -->\s*```python\n(.*?)```", re.DOTALL)


def example(readme: Path = README) -> str:
    """The example's source, as the README shows it."""
    found = _BLOCK.search(readme.read_text("utf-8"))
    assert found, f"{readme}: no ```python block after <!-- library-example -->"
    return found.group(1)


def run_example(readme: Path = README) -> dict[str, Any]:
    """Run the example; check what it left behind; return its namespace."""
    source = example(readme)
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    exec(compile(source, f"{readme}:library-example", "exec"), namespace)
    tools, results = namespace["tools"], namespace["results"]
    assert {"Read", "Write", "Edit", "Bash"} <= {t["name"] for t in tools}
    assert all(set(t) == {"name", "description", "input_schema"} for t in tools)
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2"]
    assert [r["is_error"] for r in results] == [False, False]
    assert all(r["type"] == "tool_result" for r in results)
    assert "1\tprint('hi')" in results[1]["content"]
    return namespace


def test_the_readme_library_example_runs_as_printed(capsys: Any) -> None:
    run_example()
    assert "toolu_1" in capsys.readouterr().out
    assert len(example().strip().splitlines()) <= 14  # "about ten lines"


if __name__ == "__main__":
    # Run as a script, this directory heads sys.path, and its tests/reference/
    # would shadow the installed package.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    run_example(Path(sys.argv[1]) if len(sys.argv) > 1 else README)
    print("README library example: ok")
