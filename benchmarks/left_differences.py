"""What a release still does otherwise under its own profile, grouped by why: a page, not a test.

Reads the JSON-lines reports of a CLI run judged under the release's own
profile (a later report's result replaces an earlier one's for the same
scenario, so a whole run and a rerun of part of it read as one) and writes a
Markdown page: how many scenarios ran and passed at every level, then each
scenario that did not, under the reason it did not::

    python -m benchmarks.left_differences 2.1.88 whole.jsonl rerun.jsonl > left.md

A reason comes from ``DECIDED`` (scenarios looked at one by one) or else
from the first rule of ``RULES`` whose marker the scenario's mismatches
hold; what no rule names is listed as deterministic and not modelled, with
its first mismatch, so nothing left is hidden.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

NOT_MODELLED: Final = "deterministic, not modelled"

DECIDED: Final[Mapping[str, str]] = {
    "scheduler-limit-invalid-negative-ignored": (
        "loses data: under a negative CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY 2.1.88 runs the "
        "calls but answers each that succeeded `[Tool result missing due to internal error]`; "
        "the profile keeps the results"
    ),
    "bash-validate-nul-command": (
        "connector: 2.1.88 asks before running a command holding NUL; what shows is the "
        "answer to that prompt"
    ),
    "hooks-decision-deny-wins": (
        "timing: hooks run together and the one that ends last gives the reason 2.1.88 shows"
    ),
    "pdf-pages-forms-accepted": (
        "unknowable: PDF pages rendered as images by pdftoppm, and its own messages"
    ),
    "scheduler-cascade-not-from-plain-failure": (
        "connector: the Probe is served over MCP, so the release adds its deferred-tool "
        "schema note; the engine's Probe is built in"
    ),
    "scheduler-message-duplicate-id-bad-request": (
        "connector: the Probe is served over MCP, so the release adds its deferred-tool "
        "schema note; the engine's Probe is built in"
    ),
}
"""Scenarios whose reason was settled by looking at them."""

RULES: Final[Sequence[tuple[str, Sequence[str]]]] = (
    (
        "unknowable: Node's own error texts (errno, a NUL in an argument, JSON parse, TypeError)",
        (
            "ENOTDIR",
            "ELOOP",
            "Error calling tool",
            "without null bytes",
            "Cannot read properties",
            "Unexpected end of JSON",
            "Unexpected token",
            "JSON Parse error",
            "Refusing to read",
        ),
    ),
    (
        "unknowable: PDF pages rendered as images by pdftoppm, and its own messages",
        ("pdftoppm", "PDF pages extracted", '"parts"'),
    ),
    ("unknowable: persisted-output paths and sizes", ("persisted-output",)),
    ("unknowable: the API's token counts", ("File content (", "Notebook content (")),
)
"""Reasons told by a marker in the mismatches, first match wins."""


def read_results(paths: Iterable[Path]) -> dict[str, Mapping[str, Any]]:
    """Every scenario's result, the last report's where several hold it."""
    results: dict[str, Mapping[str, Any]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("type") == "result":
                results[entry["id"]] = entry
    return results


def reason(result: Mapping[str, Any]) -> str:
    """Why ``result`` (a scenario that did not pass) did not."""
    scenario = str(result["id"])
    if scenario in DECIDED:
        return DECIDED[scenario]
    if result["outcome"] in ("timeout", "crash", "error"):
        return f"{result['outcome']}: {str(result.get('message', ''))[:100]}"
    mismatches: list[Mapping[str, Any]] = list(result.get("mismatches") or [])
    paths = [str(m["path"]) for m in mismatches]
    text = json.dumps(mismatches)
    if scenario.startswith("registry-") and any(p.startswith(("tools", "deferred")) for p in paths):
        return "unknowable: the CLI's tool pool (its own tools, their descriptions, what it defers)"
    if scenario.startswith("images-"):
        return "unknowable: the release's image pipeline (re-encoding, sizes, its output fields)"
    for why, markers in RULES:
        if any(marker in text for marker in markers):
            return why
    if any(p.endswith(("outcome.stage", "events")) or p == "response.error" for p in paths):
        return "not observable: a raw step's stage or events, which the CLI does not report"
    first = mismatches[0] if mismatches else {}
    return (
        f"{NOT_MODELLED}: {first.get('path')}: expected "
        f"{json.dumps(first.get('expected'))[:70]}, got {json.dumps(first.get('actual'))[:90]}"
    )


def page(release: str, results: Mapping[str, Mapping[str, Any]]) -> str:
    """The Markdown page for ``release``."""
    groups: dict[str, list[str]] = defaultdict(list)
    ran = passed = 0
    for scenario in sorted(results):
        result = results[scenario]
        if result["outcome"] == "not_applicable":
            continue
        ran += 1
        if result["outcome"] == "pass":
            passed += 1
            continue
        behaviour = (result.get("levels") or {}).get("behaviour") or {}
        marked = " (behaviour)" if behaviour.get("verdict") == "fail" else ""
        groups[reason(result)].append(f"`{scenario}`{marked}")
    lines = [
        f"# What {release} still does otherwise under its own profile",
        "",
        f"Scenarios that ran: {ran}; passing every level: {passed}; left: {ran - passed}.",
        "",
    ]
    for why in sorted(groups, key=lambda w: (w.startswith(NOT_MODELLED), w)):
        lines += [f"## {why} ({len(groups[why])})", ""]
        lines += [f"- {scenario}" for scenario in groups[why]]
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    """``python -m benchmarks.left_differences RELEASE REPORT...``."""
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(page(argv[0], read_results(Path(p) for p in argv[1:])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
