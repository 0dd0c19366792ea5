"""Every figure the README quotes from a run is generated from the committed results, or
checked against them (``benchmarks/results/``).

The tables and the example run sit between ``<!-- figures:NAME -->`` and
``<!-- /figures:NAME -->`` and are generated here from the committed
JSON-lines reports, with the same functions ``toolconf`` prints them with;
``python tests/test_readme_figures.py --write`` rewrites them after the
results change. Figures in running text are checked one by one (``PROSE``),
and the table of the matrix's own README against the reports it names.

Not covered, because no result file of theirs is committed: the timings of
``pytest benchmarks`` and of ``toolconf stress`` (each dated in the text).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from conformance.analysis.console import format_table, level_figures, level_lines, summarize
from conformance.analysis.fidelity import load_report
from conformance.analysis.matrix import build_matrix, load_reports
from conformance.analysis.verdict import not_applicable_lines, verdict_line
from conformance.instruments.bench import costs_report
from conformance.run.results import Outcome, ScenarioResult
from conformance.suite.registry import DEFAULT_SPEC
from conformance.suite.spec import Spec

ROOT: Final = Path(__file__).resolve().parents[1]
README: Final = ROOT / "README.md"
RESULTS: Final = ROOT / "benchmarks" / "results"
MATRIX: Final = RESULTS / "matrix"
FIDELITY: Final = RESULTS / "fidelity"
PROFILES: Final = RESULTS / "profiles"


def results_of(path: Path) -> tuple[dict[str, object], list[ScenarioResult]]:
    report = load_report(path)
    return dict(report.header), [ScenarioResult.from_json(r) for r in report.results]


def times(path: Path) -> dict[str, int]:
    """``NAME IMPL SECONDS`` lines -> seconds by name."""
    found = {}
    for line in path.read_text("utf-8").splitlines():
        name, _, seconds = line.split()
        found[name] = int(seconds)
    return found


def duration(seconds: int) -> str:
    return f"{seconds} s" if seconds < 600 else f"{round(seconds / 60)} min"


def counts(*paths: Path) -> str:
    """``pass / fail / n/a`` as the matrix counts the column of these reports (one
    implementation's run and its reruns): the scenarios citing an ID of today's SPEC.md;
    fail is every outcome but pass and not applicable."""
    (row,) = build_matrix(load_reports(list(paths)), Spec.load(DEFAULT_SPEC)).rows
    return " / ".join(str(row.total(status)) for status in ("pass", "fail", "n/a"))


def outcomes(path: Path) -> str:
    """``pass / fail / n/a`` of every result of a report, as its run printed them."""
    results = results_of(path)[1]
    passed = sum(r.outcome is Outcome.PASS for r in results)
    na = sum(r.outcome is Outcome.NOT_APPLICABLE for r in results)
    return f"{passed} / {len(results) - passed - na} / {na}"


# -- generated blocks ---------------------------------------------------------------


def good_run() -> list[str]:
    """The closing part of the reference's own run, as the console prints it."""
    header, results = results_of(MATRIX / "reference.jsonl")
    lines = ["```text", format_table("level", summarize(results, lambda r: r.level)), ""]
    lines += [*level_lines(results), ""]
    lines += [*not_applicable_lines(results, str(header["impl"])), ""]
    return [*lines, verdict_line(results), "```"]


MATRIX_ROWS: Final[Sequence[tuple[str, tuple[Path, ...]]]] = (
    # a row's reports: the run, then the reruns its column in the matrix takes (regenerate.sh)
    ("reference, `direct`", (MATRIX / "reference.jsonl",)),
    (
        "reference as an MCP server, `mcp:toolconf`",
        (MATRIX / "mcp-toolconf.jsonl", MATRIX / "mcp-toolconf-behaviours-rerun.jsonl"),
    ),
    ("MCP filesystem server 2026.8.31, `mcp:filesystem`", (MATRIX / "mcp-filesystem.jsonl",)),
    (
        "`claude mcp serve` 2.1.88, `mcp:claude-code-2.1.88`",
        (MATRIX / "mcp-claude-code-2.1.88.jsonl",),
    ),
    (
        "`claude mcp serve` 2.1.332, `mcp:claude-code-2.1.332`",
        (MATRIX / "mcp-claude-code-2.1.332.jsonl",),
    ),
    ("Claude Code 2.1.88 CLI, `claude-code:2.1.88`", (FIDELITY / "claude-code-2.1.88.jsonl",)),
    (
        "Claude Code 2.1.332 CLI, `claude-code:latest`",
        (
            FIDELITY / "claude-code-2.1.332.jsonl",
            FIDELITY / "claude-code-2.1.332-staleness-rerun.jsonl",
            FIDELITY / "claude-code-2.1.332-behaviours-rerun.jsonl",
        ),
    ),
    *(
        (f"{label}, `agent:{name}`", (MATRIX / f"agent-{name}.jsonl", *reruns))
        for label, name, reruns in (
            ("gemini-cli 0.61.0", "gemini-cli", (MATRIX / "agent-gemini-cli.rerun.jsonl",)),
            ("qwen-code 0.24.4", "qwen-code", (MATRIX / "agent-qwen-code.rerun.jsonl",)),
            ("opencode 1.18.33", "opencode", (MATRIX / "agent-opencode.rerun.jsonl",)),
            ("kilocode (kilo 7.7.7)", "kilocode", ()),
            ("codex 0.171.0", "codex", ()),
            ("cline 3.0.65", "cline", ()),
        )
    ),
)


def matrix_wall_time(path: Path) -> str:
    """From ``times.txt``, or for the runs made elsewhere from the matrix README's table."""
    known = times(MATRIX / "times.txt")
    if path.stem in known:
        return duration(known[path.stem])
    for row in table_rows(MATRIX / "README.md"):
        if row[1].startswith(f"`../fidelity/{path.name}`"):
            return row[3]
    raise AssertionError(f"no wall time for {path}")


def matrix_table() -> list[str]:
    lines = ["| implementation | pass / fail / n/a | wall time |", "|---|---|---|"]
    for label, paths in MATRIX_ROWS:
        lines.append(f"| {label} | {counts(*paths)} | {matrix_wall_time(paths[0])} |")
    return lines


PROFILE_ROWS: Final = (
    ("documented", MATRIX / "reference.jsonl"),
    ("claude-code-2.1.88", PROFILES / "reference-claude-code-2.1.88.jsonl"),
    ("claude-code-latest", PROFILES / "reference-claude-code-latest.jsonl"),
)


def profile_table() -> list[str]:
    seconds = times(PROFILES / "times.txt")
    lines = ["| profile | pass / fail / not applicable | direct |", "|---|---|---|"]
    for profile, path in PROFILE_ROWS:
        header, _ = results_of(path)
        assert header["profile"] == profile, path
        lines.append(
            f"| `{profile}` | {outcomes(path)} | {duration(seconds[f'reference-{profile}'])} |"
        )
    return lines


AGREEMENT_ROWS: Final = (
    ("2.1.88, `claude-code-2.1.88`, the varying IDs", "claude-code-2.1.88-profiled-varying"),
    ("2.1.332, `claude-code-latest`, the varying IDs", "claude-code-2.1.332-profiled-varying"),
    ("2.1.332, `claude-code-latest`, the whole suite", "claude-code-2.1.332-profiled"),
)


def agreement_table() -> list[str]:
    lines = ["| release, profile, scenarios | pass / fail / n.a. | behaviour | rendering |"]
    lines.append("|---|---|---|---|")
    for label, name in AGREEMENT_ROWS:
        path = FIDELITY / f"{name}.jsonl"
        figures = level_figures(results_of(path)[1])
        row = [label, outcomes(path), str(figures["behaviour"]), str(figures["rendering"])]
        lines.append("| " + " | ".join(row) + " |")
    return lines


FIDELITY_ROWS: Final = (
    ("2.1.88, SPEC.md before triage", "claude-code-2.1.88-before-triage"),
    ("2.1.88, after triage", "claude-code-2.1.88-triage-1"),
    ("2.1.332 (newest; run before most of the triage)", "claude-code-2.1.332"),
)


def page_behaviour_ids(page: Path) -> str:
    """The behaviour row of a committed fidelity page: IDs agree / disagree / not observable."""
    found = re.search(r"^\| behaviour \| (\d+ / \d+ / \d+) \|$", page.read_text("utf-8"), re.M)
    assert found, page
    return found[1]


def fidelity_table() -> list[str]:
    lines = [
        "| run | scenarios pass / fail / n.a. | behaviour (scenarios) | rendering (scenarios) "
        "| SPEC IDs agree / disagree / not observable (behaviour) |",
        "|---|---|---|---|---|",
    ]
    for label, name in FIDELITY_ROWS:
        path = FIDELITY / f"{name}.jsonl"
        figures = level_figures(results_of(path)[1])
        ids = page_behaviour_ids(FIDELITY / f"{name}.md")
        row = [label, outcomes(path), str(figures["behaviour"]), str(figures["rendering"]), ids]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def costs_table() -> list[str]:
    """What each implementation's model receives, as ``toolconf bench --costs`` tables it."""
    run = costs_report.from_json((RESULTS / "costs.json").read_text("utf-8"))
    return costs_report.glance_table(run)


BLOCKS: Final[dict[str, Callable[[], list[str]]]] = {
    "good-run": good_run,
    "matrix": matrix_table,
    "profiles": profile_table,
    "agreement": agreement_table,
    "fidelity": fidelity_table,
    "costs": costs_table,
}


def block_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- figures:{name} -->\n)(.*?)(<!-- /figures:{name} -->)", re.DOTALL)


def rewrite(text: str) -> str:
    """The README with every generated block regenerated."""
    for name, make in BLOCKS.items():
        body = "\n".join(make()) + "\n"
        text, found = block_pattern(name).subn(lambda m, b=body: m[1] + b + m[3], text)
        assert found == 1, f"README.md has no block figures:{name}"
    return text


# -- figures in running text --------------------------------------------------------

PROSE: Final[Sequence[tuple[str, Path, str]]] = (
    # (a phrase of README.md, the committed file, the phrase that file must hold)
    (
        "Of the 171 scenarios where 2.1.88 still differs from\nthe reference in behaviour, 47 "
        "are kept so by a Decision",
        FIDELITY / "claude-code-2.1.88-triage-1.md",
        "47 kept by a Decision (the expected-failures file), 124 not explained by one",
    ),
    (
        "1,000 Reads over 113\nfiles (815 KB), 180 re-reads (18%) and 60 Edits. 92 re-reads",
        RESULTS / "bench.md",
        "1000 Reads and 60 Edits over 113 files (815,479 bytes) of this project's own sources, "
        "seed 0: 180 re-reads (18.0%). Of those, 92 find the file unchanged",
    ),
    ("60\nfollow an Edit and 28 a Read of another range", RESULTS / "bench.md", "28 come after"),
    (
        "Dedup cut the tokens returned by 7.9% (2,257,598 → 2,079,873)",
        RESULTS / "bench.md",
        "dedup saved 7.9% of the tokens the trace returned (2,257,598 → 2,079,873)",
    ),
    ("(72.1 → 38.6 ms over stdio)", RESULTS / "bench.md", "(72.1 ms → 38.6 ms)"),
    (
        "52.9 s serial and 30.3 s with `--jobs 2` in process (`direct`)",
        RESULTS / "pace" / "whole-run.md",
        "| reference 0.1.0 | `direct` | whole suite | 1077 | 52.9s | 30.3s |",
    ),
    (
        "A 2 MiB source file (493,541 tokens whole)",
        RESULTS / "costs.md",
        "2 MiB text 2 MiB (493,541 tokens)",
    ),
    ("39 to 79 tokens", RESULTS / "costs.md", "| **claude-code-2.1.88** | 40 (error) | 39 (error)"),
    ("39 to 79 tokens", RESULTS / "costs.md", "| **claude-code-2.1.332** | 25,086 | 79 (error)"),
    ("2,570 (cline) to 17,707", RESULTS / "costs.md", "| **cline** | 2,570 | 2,570 |"),
    ("2,570 (cline) to 17,707", RESULTS / "costs.md", "| **gemini-cli** | 17,707 | 17,707 |"),
    ("past 20 MB", RESULTS / "costs.md", "File size exceeds the 20MB limit"),
    (
        "opencode\n  and kilocode send 15,738 and 15,737 tokens of a 50 MiB file",
        RESULTS / "costs.md",
        "| **opencode** | 15,738 | 15,738 | 15,738 |",
    ),
    (
        "15,737 tokens of a 50 MiB file",
        RESULTS / "costs.md",
        "| **kilocode** | 15,737 | 15,737 | 15,737 |",
    ),
    ("saving 11.8%, 9.9% and 7.2%", RESULTS / "costs.md", "| 11.8% (52,077) |"),
    ("saving 11.8%, 9.9% and 7.2%", RESULTS / "costs.md", "| 9.9% (43,907) |"),
    ("saving 11.8%, 9.9% and 7.2%", RESULTS / "costs.md", "| 7.2% (26,829) |"),
    (
        "as text, 8,665 tokens",
        RESULTS / "costs.md",
        "| 64 KiB binary | cline | returned | 19,487 | 8,665 |",
    ),
    ("by its whole 61,631 tokens", RESULTS / "costs.md", "File content (61631 tokens) exceeds"),
    ("first 2,000 lines (21,081 tokens)", RESULTS / "costs.md", "| **reference** | 21,081 |"),
    (
        "2.1.332 sends\n  25,086 tokens",
        RESULTS / "costs.md",
        "| **claude-code-2.1.332** | 25,086 |",
    ),
    ("codex has no Read tool", RESULTS / "costs.md", "codex has no tool playing Read"),
    (
        "47.2 s and 25.3 s over stdio",
        RESULTS / "pace" / "whole-run.md",
        "| `stdio:python -m reference.adapter` | whole suite | 1077 | 47.2s | 25.3s |",
    ),
)


def table_rows(path: Path) -> list[list[str]]:
    rows = []
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


# -- the tests ----------------------------------------------------------------------


def test_the_generated_blocks_match_the_committed_results() -> None:
    text = README.read_text("utf-8")
    for name, make in BLOCKS.items():
        found = block_pattern(name).search(text)
        assert found, f"README.md has no block figures:{name}"
        expected = "\n".join(make())
        assert found[2].rstrip("\n") == expected, (
            f"README.md's figures:{name} block is stale; run python tests/test_readme_figures.py "
            f"--write. Expected:\n{expected}"
        )


def test_figures_in_running_text_are_those_of_the_committed_results() -> None:
    text = README.read_text("utf-8")
    for phrase, path, holds in PROSE:
        assert phrase in text, f"README.md no longer says {phrase!r}: update PROSE"
        assert holds in path.read_text("utf-8"), f"{path.name} does not say {holds!r}"


def test_the_matrix_readme_table_counts_what_its_reports_hold() -> None:
    checked = 0
    for row in table_rows(MATRIX / "README.md"):
        named = re.findall(r"`([^`]+\.jsonl)`", row[1]) if len(row) == 5 else []
        if not named:
            continue
        first = (MATRIX / named[0]).resolve()
        paths = [first, *((first.parent / name).resolve() for name in named[1:])]
        path = paths[0]
        assert row[4].startswith(counts(*paths)), (row[0], counts(*paths))
        known = times(MATRIX / "times.txt")
        if path.stem in known:
            assert row[3].startswith(f"{known[path.stem]} s"), (row[0], known[path.stem])
        checked += 1
    assert checked == len(MATRIX_ROWS)


def test_the_suite_size_the_readme_quotes_is_the_committed_runs() -> None:
    _, results = results_of(MATRIX / "reference.jsonl")
    quoted = {
        int(n.replace(",", ""))
        for n in re.findall(r"(\d,?\d{3}) scenarios", README.read_text("utf-8"))
    }
    assert quoted <= {len(results)}, f"the README names {quoted}, the committed run {len(results)}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_readme_figures.py --write")
    README.write_text(rewrite(README.read_text("utf-8")), encoding="utf-8")
    print("README.md: figures regenerated")
