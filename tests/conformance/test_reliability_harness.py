"""``toolconf stress`` itself (conformance/instruments/reliability), with small counts.

Each class runs against the reference adapter (where it must find what the
reference gets right) and against ``reckless_adapter.py``, which tears
files, crashes on bad lines, blocks on FIFOs and checks no permission (where
it must find the defect). Counts and sizes are tiny; nothing asserts on time.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from conformance.cli import main
from conformance.errors import ConformanceError
from conformance.instruments.reliability.bypass import CASES_FILE, load_cases, run_bypass
from conformance.instruments.reliability.common import DEFAULT_IMPL, adapter_argv
from conformance.instruments.reliability.fuzz import lines, run_fuzz
from conformance.instruments.reliability.hostile import items, run_hostile
from conformance.instruments.reliability.kills import run_kills
from conformance.instruments.reliability.stress import StressConfig, parse_classes
from conformance.wire.connector import ConnectorOptions

SHIPPED, _ = load_cases(None)
RECKLESS = "stdio:" + shlex.join(
    [sys.executable, str(Path(__file__).with_name("reckless_adapter.py"))]
)
FAST = ConnectorOptions(timeout=5.0, hello_timeout=60.0)


@pytest.mark.slow
@pytest.mark.subprocess
def test_kills_of_the_reference_leave_old_or_new_content() -> None:
    figures = run_kills(DEFAULT_IMPL, ConnectorOptions(timeout=60.0), kills=3, size=50_000, seed=3)
    assert figures.kills == 3
    assert figures.old + figures.new == 3
    assert (figures.torn, figures.missing, figures.setup_failures) == (0, 0, 0)
    assert figures.ok
    assert set(figures.by_kind) == {"utf8", "crlf", "utf16"}  # the first three kinds, in order


@pytest.mark.slow
@pytest.mark.subprocess
def test_kills_find_a_torn_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECKLESS_TEAR", "1")
    options = ConnectorOptions(timeout=30.0, pass_env=("RECKLESS_TEAR",))
    figures = run_kills(RECKLESS, options, kills=4, size=400_000, seed=5)
    assert figures.torn > 0
    assert not figures.ok
    assert any("torn" in line for line in figures.failures)


def test_fuzz_lines_are_a_function_of_the_seed() -> None:
    first = lines(200, 7, "/sandbox")
    assert first == lines(200, 7, "/sandbox")
    assert first != lines(200, 8, "/sandbox")
    families = {line.family for line in first}
    assert families == {
        "malformed", "wrong_type", "deep", "surrogate", "nul", "cr", "huge", "message_mix"
    }  # fmt: skip
    assert [line.seq for line in first if line.seq is not None] == sorted(
        line.seq for line in first if line.seq is not None
    )


@pytest.mark.subprocess
def test_fuzz_counts_every_line_against_the_reference() -> None:
    figures = run_fuzz(DEFAULT_IMPL, FAST, count=25, seed=1, line_timeout=5.0, huge=10_000)
    assert figures.lines == 25
    assert figures.answered + figures.crashes + figures.hangs == 25
    assert figures.session_works_after


@pytest.mark.slow
@pytest.mark.subprocess
def test_fuzz_finds_crashes_and_restarts() -> None:
    figures = run_fuzz(RECKLESS, FAST, count=40, seed=2, line_timeout=2.0, huge=10_000)
    assert figures.crashes > 0  # the reckless adapter dies on a line that is not JSON
    assert figures.failed_families.get("malformed", 0) > 0
    assert figures.session_works_after  # restarted, it still writes and reads
    assert not figures.ok


def test_hostile_items_cover_the_issue(tmp_path: Path) -> None:
    made = items(tmp_path, big_line=3_000_000)
    names = " ".join(item.name for item in made)
    for word in (
        "/dev/zero",
        "fifo",
        "socket",
        "sparse 2 GiB",
        "/proc/",
        "directory",
        "loop",
        "MB line",
    ):
        assert word in names
    assert (tmp_path / "hostile" / "sparse.bin").stat().st_size == 2 << 30
    assert (tmp_path / "hostile" / "one-line.txt").stat().st_size == 3_000_001


@pytest.mark.slow
@pytest.mark.subprocess
def test_hostile_reports_a_fifo_hang_and_goes_on() -> None:
    options = ConnectorOptions(timeout=1.0, hello_timeout=60.0)
    figures = run_hostile(RECKLESS, options, big_line=1_000_000, slow=2.0)
    ends = {row["item"]: row["end"] for row in figures.items}
    assert ends["fifo without a writer"] == "hang"
    assert ends["a directory"] == "answered"  # an IsADirectoryError answer, after the restart
    assert figures.hangs >= 1
    assert not figures.ok


def test_bypass_cases_load_from_the_shipped_file_or_another(tmp_path: Path) -> None:
    document, source = load_cases(None)
    assert document["cases"]
    assert source == str(CASES_FILE)
    custom = tmp_path / "cases.yaml"
    custom.write_text(yaml.safe_dump({"setup": SHIPPED["setup"], "cases": SHIPPED["cases"][:2]}))
    document, source = load_cases(custom)
    assert (len(document["cases"]), source) == (2, str(custom))
    forms = {case["form"] for case in SHIPPED["cases"]}
    assert forms >= {"expansion", "recursive", "compound", "symlink", "..", "~", "hard link"}
    assert forms >= {"/proc/self/root", "hook", "tool_use id", "check-then-use race"}


@pytest.mark.subprocess
def test_bypass_finds_a_reader_that_checks_nothing() -> None:
    figures = run_bypass(RECKLESS, FAST, cases_file=None, only="read-")
    assert figures.cases >= 4
    assert figures.bypasses >= 1
    assert any(b["id"] == "read-dotdot" for b in figures.bypassed)


@pytest.mark.subprocess
def test_bypass_of_literal_paths_is_refused_by_the_reference() -> None:
    figures = run_bypass(DEFAULT_IMPL, FAST, cases_file=None, only="read-dotdot")
    assert (figures.cases, figures.bypasses, figures.errors) == (1, 0, 0)


@pytest.mark.subprocess
def test_stress_cli_writes_figures_and_fails_on_a_defect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.yaml"
    chosen = [c for c in SHIPPED["cases"] if c["id"] == "read-dotdot"]
    cases.write_text(yaml.safe_dump({"setup": SHIPPED["setup"], "cases": chosen}))
    out = tmp_path / "figures.json"
    argv = ["stress", "--impl", RECKLESS, "--only", "bypass", "--cases", str(cases)]
    status = main([*argv, "--report", f"json={out}"])
    assert status == 1
    figures = json.loads(out.read_text())
    assert figures["classes"]["bypass"]["bypasses"] == 1
    assert figures["ok"] is False
    printed = capsys.readouterr().out
    assert "== bypass: DEFECTS" in printed
    assert "FAILED: 1 of 1 classes found defects (bypass)" in printed


def test_presets_and_class_names() -> None:
    full = StressConfig.full()
    assert full.kills >= 1000
    assert full.lines >= 10_000
    assert StressConfig().seed == full.seed
    assert parse_classes("bypass,kills") == ("kills", "bypass")
    with pytest.raises(ValueError, match="unknown class"):
        parse_classes("kills,nope")
    with pytest.raises(ConformanceError, match="adapter process"):
        adapter_argv("direct")
