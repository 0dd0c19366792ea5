"""``toolconf run --jobs N``: several sessions at once, the results and reports a serial run's."""

from __future__ import annotations

import io
import json
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import FAKE, fake_command

from conformance.analysis.console import Progress, format_duration
from conformance.cli import main
from conformance.peers.direct import DirectConnector
from conformance.peers.fake_adapter import FakeEngine
from conformance.run.parallel import SessionPool
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.session import RunSession, RunSettings
from conformance.suite.scenario import Scenario, load_scenarios
from conformance.wire.connector import ConnectorOptions

PASSES = """\
    id: {id}
    title: passes on the fake
    spec: [FAKE-CALL-1]
    level: MUST
    requires: [read]
    steps:
      - call: {{name: Read, input: {{file_path: "{{root}}/a.txt"}}}}
        expect: {{content: "ok: Read"}}
"""
FAILS = """\
    id: {id}
    title: fails on the fake
    spec: [FAKE-CALL-2]
    level: SHOULD
    requires: [read]
    steps:
      - call: {{name: Read, input: {{file_path: "{{root}}/a.txt"}}}}
        expect: {{content: {{contains: "hello"}}}}
"""
NOT_APPLICABLE = """\
    id: {id}
    title: needs bash, which the fake lacks
    spec: [FAKE-CALL-1]
    level: MAY
    requires: [bash]
    steps:
      - call: {{name: Bash, input: {{command: "true"}}}}
"""
KINDS = {"pass": PASSES, "fail": FAILS, "na": NOT_APPLICABLE}
PATTERN = ["pass", "fail", "pass", "na", "pass", "pass", "fail", "pass", "na", "fail"] * 2
"""Twenty scenarios: six fail, four are not applicable."""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """Twenty scenarios for the fake, passing, failing and not applicable as ``PATTERN``."""
    root = tmp_path / "suite"
    for number, kind in enumerate(PATTERN):
        area = root / ("first" if number < 10 else "second")
        area.mkdir(parents=True, exist_ok=True)
        scenario_id = f"s{number:02d}-{kind}"
        text = textwrap.dedent(KINDS[kind].format(id=scenario_id))
        (area / f"{scenario_id}.yaml").write_text(text)
    return root


def records(path: Path) -> list[dict[str, Any]]:
    """A JSON-lines report's lines without what differs from run to run (the times)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line.pop("duration", None)
        line.pop("started", None)
    return lines


def run_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, *args: str
) -> tuple[int, str, list[dict[str, Any]]]:
    report = tmp_path / f"{name}.jsonl"
    status = main(["run", *args, "--no-progress", "--report", f"jsonl={report}"])
    return status, capsys.readouterr().out, records(report)


def test_jobs_give_a_serial_runs_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    status, out, serial = run_report(capsys, tmp_path, "serial", str(suite), "--impl", FAKE)
    assert status == 1
    assert "time: " in out
    assert "at once" not in out
    for jobs in ("2", "3", "25"):
        status, out, parallel = run_report(
            capsys, tmp_path, f"j{jobs}", str(suite), "--impl", FAKE, "--jobs", jobs
        )
        assert status == 1
        assert parallel == serial
        sessions = min(int(jobs), len(PATTERN))
        assert f"for 20 scenarios on {sessions} sessions at once" in out
        assert f"20 scenarios, {sessions} sessions at once" in out
    assert [r["id"] for r in serial[1:-1]] == sorted(r["id"] for r in serial[1:-1])


@pytest.mark.subprocess
def test_jobs_over_stdio_give_a_serial_runs_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    impl = fake_command("ok")
    _, _, serial = run_report(capsys, tmp_path, "serial", str(suite), "--impl", impl)
    _, _, parallel = run_report(capsys, tmp_path, "j2", str(suite), "--impl", impl, "-j", "2")
    assert parallel == serial


@pytest.mark.parametrize("stop", [["-x"], ["--maxfail", "2"], ["--maxfail", "6"]])
def test_maxfail_stops_where_a_serial_run_stops(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path, stop: list[str]
) -> None:
    _, out, serial = run_report(capsys, tmp_path, "serial", str(suite), "--impl", FAKE, *stop)
    assert "not run" in out or stop == ["--maxfail", "6"]
    _, out, parallel = run_report(
        capsys, tmp_path, "j3", str(suite), "--impl", FAKE, "--jobs", "3", *stop
    )
    assert parallel == serial
    judged = len(serial) - 2
    assert sum(r.get("outcome") == "fail" for r in serial) == int(stop[-1] if stop[1:] else 1)
    if judged < len(PATTERN):
        assert f"{len(PATTERN) - judged} not run" in out


def test_expected_failures_baseline_and_last_failed_work_with_jobs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    xfail = tmp_path / "xfail.yaml"
    xfail.write_text("s01-fail: known\ns06-fail: known\ns09-fail: known\n")
    baseline = tmp_path / "baseline.json"
    base = ["run", str(suite), "--impl", FAKE, "--no-progress", "--jobs", "2"]
    assert main([*base, "--expected-failures", str(xfail), "--baseline", str(baseline)]) == 1
    out = capsys.readouterr().out
    assert "XFAIL s01-fail" in out
    assert "baseline recorded" in out
    assert main([*base, "--baseline", str(baseline)]) == 1
    assert "no changes" in capsys.readouterr().out
    assert main([*base, "--last-failed"]) == 1
    out = capsys.readouterr().out
    assert "6 scenarios, 2 sessions at once" in out
    assert "FAILED: 6 of 6 scenarios did not pass" in out


@pytest.mark.subprocess
@pytest.mark.parametrize("mode", ["crash", "hang"])
def test_a_peer_that_crashes_or_hangs_is_replaced_in_every_session(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path, mode: str
) -> None:
    impl = fake_command(mode)
    args = (str(suite), "--area", "first", "--impl", impl, "--timeout", "0.5")
    _, _, serial = run_report(capsys, tmp_path, "serial", *args)
    _, out, parallel = run_report(capsys, tmp_path, "j2", *args, "--jobs", "2")
    outcomes = [r["outcome"] for r in parallel[1:-1]]
    assert outcomes.count("timeout" if mode == "hang" else "crash") == 8
    assert [(r["id"], r["outcome"]) for r in parallel[1:-1]] == [
        (r["id"], r["outcome"]) for r in serial[1:-1]
    ]
    assert parallel[-1] == serial[-1]  # the counts and figures
    assert "on 2 sessions at once" in out


def fake_session(settings: RunSettings, make: Any = FakeEngine) -> RunSession:
    return RunSession(DirectConnector(make, options=ConnectorOptions(timeout=5.0)), settings)


def chosen(suite: Path) -> list[Scenario]:
    scenarios, errors = load_scenarios([suite])
    assert not errors
    return scenarios


def never_starts() -> FakeEngine:
    raise RuntimeError("no room for another engine")


def test_a_spare_session_that_cannot_start_leaves_its_share_to_the_others(
    suite: Path,
) -> None:
    settings = RunSettings(jobs=3)
    first = fake_session(settings)
    first.start()
    pool = SessionPool(first, lambda: fake_session(settings, never_starts), jobs=3)
    results = list(pool.judge_all(chosen(suite)))
    first.close()
    assert [r.id for r in results] == [s.id for s in chosen(suite)]
    assert [r.outcome for r in results].count(Outcome.FAIL) == 6
    assert len(pool.unstarted) == 2
    assert (
        "[crash] creating the engine raised RuntimeError('no room for another engine')"
        in (pool.unstarted[0])
    )


def test_a_session_whose_judging_breaks_gives_a_harness_error_not_a_stall(suite: Path) -> None:
    class Breaks(RunSession):
        def evaluate(self, scenario: Scenario) -> ScenarioResult:
            if scenario.id.endswith("-na"):
                raise ValueError("judging broke")
            return super().evaluate(scenario)

    settings = RunSettings(jobs=2)
    first = Breaks(DirectConnector(FakeEngine), settings)
    first.start()
    pool = SessionPool(first, lambda: Breaks(DirectConnector(FakeEngine), settings), jobs=2)
    results = list(pool.judge_all(chosen(suite)))
    first.close()
    broken = [r for r in results if r.kind == "harness"]
    assert [r.id for r in broken] == [s.id for s in chosen(suite) if s.id.endswith("-na")]
    assert all("judging broke" in r.message for r in broken)
    assert len(results) == len(PATTERN)


def test_sessions_judge_at_once_and_every_spare_is_closed(suite: Path) -> None:
    at_once: set[int] = set()
    closed: list[int] = []
    both = threading.Barrier(2, timeout=5)

    class Counted(RunSession):
        def evaluate(self, scenario: Scenario) -> ScenarioResult:
            at_once.add(threading.get_ident())
            if scenario.id.startswith("s00") or scenario.id.startswith("s01"):
                both.wait()  # each of two sessions holds one scenario at the same moment
            return super().evaluate(scenario)

        def close(self) -> None:
            closed.append(id(self))
            super().close()

    settings = RunSettings(jobs=2)
    first = Counted(DirectConnector(FakeEngine), settings)
    first.start()
    pool = SessionPool(first, lambda: Counted(DirectConnector(FakeEngine), settings), jobs=2)
    assert len(list(pool.judge_all(chosen(suite)))) == len(PATTERN)
    assert len(at_once) == 2
    assert len(closed) == 1  # the spare; the first is the caller's to close
    first.close()


def test_a_pool_needs_one_session_at_least() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SessionPool(fake_session(RunSettings()), lambda: fake_session(RunSettings()), jobs=0)


def test_jobs_takes_a_whole_number_or_auto(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit):
            main(["run", "--jobs", bad])
        assert "is not a whole number of at least 1" in capsys.readouterr().err


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def result(number: int, outcome: Outcome = Outcome.PASS) -> ScenarioResult:
    return ScenarioResult(id=f"s{number}", outcome=outcome, area="a")


def test_the_progress_line_shows_the_time_so_far_and_an_estimate_of_the_time_left() -> None:
    clock, terminal = Clock(), io.StringIO()
    bar = Progress(4, terminal, tty=True, clock=clock)
    clock.now += 30
    bar.update(result(1))
    assert "1/4 bad: 0  30s, ETA 1m30s" in terminal.getvalue()
    clock.now += 90
    bar.update(result(2, Outcome.CRASH))
    assert "2/4 bad: 1  2m00s, ETA 2m00s" in terminal.getvalue()
    clock.now += 3600
    bar.update(result(3))
    bar.update(result(4))
    bar.finish()
    assert terminal.getvalue().count("\r[") == 4
    assert "4/4 bad: 1  1h02m00s " in terminal.getvalue()
    assert bar.elapsed == 3720


def test_without_a_terminal_a_time_line_comes_every_so_often() -> None:
    clock, plain = Clock(), io.StringIO()
    lines = Progress(3, plain, tty=False, clock=clock, every=60)
    clock.now += 20
    lines.update(result(1))
    clock.now += 50
    lines.update(result(2))
    clock.now += 10
    lines.update(result(3))
    assert plain.getvalue().splitlines() == [
        "pass            a/s1",
        "pass            a/s2",
        "time            2/3, 1m10s, ETA 35s",
        "pass            a/s3",
    ]


def test_durations_read_as_people_write_them() -> None:
    assert [format_duration(s) for s in (0.04, 9.94, 42.4, 81, 3599.6, 3723)] == [
        "0.0s",
        "9.9s",
        "42s",
        "1m21s",
        "1h00m00s",
        "1h02m03s",
    ]
