"""The mutants: the registry, their faults, and that the suite kills a known one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import reference.filestate
import reference.tools.common
import reference.tools.write
from conformance import Runner, connect, load_scenario
from conformance.cli import main
from conformance.instruments.mutants import MUTANTS, Mutant, MutantEngine, get_mutant, orchestrate
from conformance.instruments.mutants.base import session_fault
from conformance.instruments.mutants.orchestrate import (
    TARGETED,
    Killer,
    SuiteRun,
    judge,
    run_scenarios,
    targets,
)
from conformance.run.results import Outcome
from conformance.suite.registry import DEFAULT_SCENARIOS, DEFAULT_SPEC
from conformance.suite.scenario import load_scenarios
from conformance.suite.selection import cites, citing_filter
from conformance.suite.spec import Spec
from conformance.wire.connector import ConnectorOptions

OPTIONS = ConnectorOptions(timeout=20.0, hello_timeout=60.0)
REQUIRED = {
    "no-read-before-write",
    "staleness-ignored",
    "staleness-by-mtime-only",
    "staleness-ne-not-gt",
    "dedup-ignores-range",
    "dedup-ignores-mtime",
    "dedup-after-write",
    "dedup-killswitch-ignored",
    "truncate-instead-of-throw",
    "no-size-gate",
    "off-by-one-offset",
    "long-lines-cut",
    "line-numbers-padded",
    "no-malware-reminder",
    "crlf-lost-on-edit",
    "curly-quotes-lost",
    "trailing-whitespace-kept",
    "first-match-instead-of-unique",
    "lf-policy-broken",
    "partial-read-accepted-for-write",
    "device-paths-not-blocked",
    "extra-input-fields-accepted",
    "bom-dropped",
    "env-cap-ignored",
    "deny-rule-ignored",
    "error-code-swapped",
    "deny-not-final",
    "hook-allow-overrides-deny",
    "results-in-completion-order",
    "unsafe-tool-run-concurrently",
    "context-modifier-inside-batch",
    "original-input-not-passed-to-call",
    "safety-check-skipped-in-bypass",
}


def scenario(area: str, name: str) -> Path:
    return DEFAULT_SCENARIOS / area / f"{name}.yaml"


# -- the registry -----------------------------------------------------------------


def test_the_registry_loads_every_required_mutant() -> None:
    assert len(MUTANTS) >= 18
    assert set(MUTANTS) >= REQUIRED
    assert all(name == mutant.name for name, mutant in MUTANTS.items())


def test_names_are_kebab_case_and_faults_are_one_kind() -> None:
    for mutant in MUTANTS.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", mutant.name), mutant.name
        assert (mutant.on_begin is None) != (mutant.patch is None), mutant.name
        assert mutant.description, mutant.name
        assert "\n" not in mutant.description, mutant.name


def test_every_declared_spec_id_exists_in_spec_md() -> None:
    spec = Spec.load(DEFAULT_SPEC)
    requirements = spec.requirements
    assert not spec.problems
    for mutant in MUTANTS.values():
        assert mutant.breaks, mutant.name
        unknown = [spec_id for spec_id in mutant.breaks if spec_id not in requirements]
        assert not unknown, f"{mutant.name} breaks unknown IDs {unknown}"


def test_a_second_mutant_with_a_taken_name_is_refused() -> None:
    before = dict(MUTANTS)
    with pytest.raises(ValueError, match="registered twice"):
        session_fault("staleness-ignored", "again", breaks=("STATE-STALE-1",))(lambda _e: None)
    with pytest.raises(ValueError, match="kebab-case"):
        session_fault("Not_Kebab", "bad name", breaks=("STATE-STALE-1",))(lambda _e: None)
    assert before == MUTANTS


def test_an_unknown_mutant_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--only", "no-such-mutant"]) == 2
    assert "unknown mutant 'no-such-mutant'" in capsys.readouterr().err


def test_list_names_every_mutant_with_its_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "--list"]) == 0
    out = capsys.readouterr().out
    for mutant in MUTANTS.values():
        assert mutant.name in out
        assert ",".join(mutant.breaks) in out


# -- the faults apply cleanly ------------------------------------------------------


def test_every_session_fault_applies_to_a_fresh_session(tmp_path: Path) -> None:
    for mutant in MUTANTS.values():
        if mutant.on_begin is None:
            continue
        engine = MutantEngine(mutant)
        begin = {"seq": 1, "cmd": "begin", "session": {"root": str(tmp_path)}}
        assert engine.handle(begin) == {"seq": 1, "ok": True}, mutant.name
        hello = engine.handle({"seq": 2, "cmd": "hello", "protocol": 1})
        assert hello["implementation"]["name"] == f"reference-mutant:{mutant.name}"


@pytest.mark.subprocess
def test_every_process_patch_applies_in_a_process_of_its_own() -> None:
    # One child process; each patch is undone (module dicts restored) before the next.
    code = textwrap.dedent(
        """
        import sys
        from conformance.instruments.mutants import MUTANTS
        modules = [m for n, m in sys.modules.items() if n.split(".")[0] == "reference"]
        for mutant in MUTANTS.values():
            if mutant.patch is None:
                continue
            saved = [(m, dict(vars(m))) for m in modules]
            mutant.patch()
            changed = [m.__name__ for m, before in saved if vars(m) != before]
            assert changed, mutant.name + " patched nothing"
            for m, before in saved:
                vars(m).update(before)
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr


# -- the suite kills a known mutant -------------------------------------------------


def test_a_session_mutant_is_killed_in_process() -> None:
    refused = load_scenario(scenario("write", "write-existing-unread-refused"))
    with Runner(connect("direct", OPTIONS)) as runner:
        assert runner.run(refused).outcome is Outcome.PASS
    with Runner(connect("mutant:error-code-swapped", OPTIONS)) as runner:
        assert runner.hello is not None
        assert runner.hello.implementation["name"] == "reference-mutant:error-code-swapped"
        result = runner.run(refused)
    assert result.outcome is Outcome.FAIL
    assert "error_code: expected 2, got 3" in result.message


@pytest.mark.subprocess
def test_a_process_mutant_is_killed_in_its_own_process_and_leaks_nothing() -> None:
    assert get_mutant("staleness-ignored").scope == "process"
    original = reference.filestate.is_stale
    stale = load_scenario(scenario("write", "write-stale-after-external-write"))
    with Runner(connect("mutant:staleness-ignored", OPTIONS)) as runner:
        result = runner.run(stale)
    assert result.outcome is Outcome.FAIL, result.message
    assert reference.filestate.is_stale is original
    assert vars(reference.tools.common)["is_stale"] is original


# -- verdicts -----------------------------------------------------------------------

MUTANT = Mutant(name="m", description="a fault", breaks=("STATE-STALE-1",), patch=lambda: None)


def killer(scenario_id: str, *spec: str) -> Killer:
    return Killer(id=scenario_id, outcome="fail", spec=spec)


def test_killed_needs_a_killer_citing_one_of_the_mutants_ids() -> None:
    control = SuiteRun(impl="direct", scenarios=3)
    own = killer("own", "STATE-STALE-1", "WRITE-VALIDATE-1")
    other = killer("other", "READ-FORMAT-1")
    verdict = judge(MUTANT, SuiteRun(impl="mutant:m", failed=(other, own)), control)
    assert (verdict.status, verdict.ok, verdict.examples()) == ("killed", True, ["own", "other"])
    verdict = judge(MUTANT, SuiteRun(impl="mutant:m", failed=(other,)), control)
    assert (verdict.status, verdict.ok) == ("killed, but not by its own IDs", False)
    verdict = judge(MUTANT, SuiteRun(impl="mutant:m"), control)
    assert (verdict.status, verdict.ok) == ("SURVIVED", False)
    verdict = judge(MUTANT, SuiteRun(impl="mutant:m", error="exit status 3"), control)
    assert (verdict.status, verdict.ok) == ("NOT RUN", False)


def test_a_scenario_the_control_fails_kills_nothing() -> None:
    broken = killer("broken-anyway", "STATE-STALE-1")
    control = SuiteRun(impl="direct", failed=(broken,), scenarios=3)
    verdict = judge(MUTANT, SuiteRun(impl="mutant:m", failed=(broken,)), control)
    assert verdict.status == "SURVIVED"


# -- targeted runs: selection -----------------------------------------------------


def test_cites_matches_ids_exactly_or_as_a_glob() -> None:
    assert cites(("READ-DEDUP-1", "READ-RANGE-1"), ["READ-RANGE-1"])
    assert not cites(("READ-DEDUP-10",), ["READ-DEDUP-1"])
    assert cites(("READ-DEDUP-10",), ["READ-DEDUP-*"])
    assert not cites((), ["READ-DEDUP-*"])


def test_the_loader_filter_keeps_a_file_it_cannot_judge() -> None:
    keep = citing_filter(["STATE-STALE-1"])
    assert keep({"spec": ["STATE-STALE-1"]}) is True
    assert keep({"spec": ["READ-RANGE-1"]}) is False
    assert keep({"spec": "STATE-STALE-1"}) is True
    assert keep(["not", "a", "mapping"]) is True


def run_ids(tmp_path: Path, *args: str) -> set[str]:
    report = tmp_path / "report.jsonl"
    argv = ["run", "--no-progress", "--report", f"jsonl={report}", *args]
    assert main(argv) == 0
    lines = [json.loads(line) for line in report.read_text("utf-8").splitlines()]
    return {r["id"] for r in lines if r["type"] == "result"}


def test_run_spec_selects_exactly_the_scenarios_citing_the_ids(tmp_path: Path) -> None:
    every, _ = load_scenarios([DEFAULT_SCENARIOS], root=DEFAULT_SCENARIOS)
    wanted = {"READ-DEDUP-4", "PDF-PAGES-2"}
    expected = {s.id for s in every if wanted & set(s.spec)}
    assert expected
    assert run_ids(tmp_path, "--spec", "READ-DEDUP-4", "--spec", "PDF-PAGES-2") == expected
    assert main(["run", "--no-progress", "--spec", "READ-DEDUP-4", "-k", "no-such-id"]) == 5


def test_run_spec_still_reports_a_file_that_does_not_load(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "broken.yaml").write_text("id: broken\nspec: 7\n", "utf-8")
    (tmp_path / "a" / "other.yaml").write_text("id: other\nspec: [READ-RANGE-1]\n", "utf-8")
    argv = ["run", "--no-progress", str(tmp_path), "--spec", "STATE-STALE-1"]
    assert main(argv) == 1  # the broken file is an error result; the other is skipped


def test_targets_are_the_scenarios_citing_the_declared_ids() -> None:
    every, _ = load_scenarios([DEFAULT_SCENARIOS], root=DEFAULT_SCENARIOS)
    mutant = get_mutant("staleness-by-mtime-only")
    chosen = targets(mutant, every)
    assert chosen
    assert {s.id for s in chosen} == {s.id for s in every if "STATE-STALE-1" in s.spec}


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_real_process_mutant_is_killed_by_its_targeted_run() -> None:
    every, _ = load_scenarios([DEFAULT_SCENARIOS], root=DEFAULT_SCENARIOS)
    mutant = get_mutant("staleness-ignored")
    chosen = targets(mutant, every)
    run = run_scenarios(f"mutant:{mutant.name}", chosen)
    control = run_scenarios("direct", chosen)
    assert (run.error, control.error, control.failed) == ("", "", ())
    assert run.scenarios == len(chosen)
    verdict = judge(mutant, run, control, stage=TARGETED)
    assert (verdict.status, verdict.stage) == ("killed", TARGETED)
    assert original_is_stale() is reference.filestate.is_stale


def original_is_stale() -> object:
    return vars(reference.tools.common)["is_stale"]


def test_an_unknown_impl_is_a_run_that_did_not_happen() -> None:
    run = run_scenarios("no-such-scheme:x", [])
    assert run.error
    assert not run.failed


# -- targeted runs: verdicts --------------------------------------------------------

OWN = killer("own-scenario", "STATE-STALE-1")
OTHER = killer("other-scenario", "READ-FORMAT-1")
SUITE = 5


class Stages:
    """Stand-ins for the two stages' runners, recording what each was asked to run."""

    def __init__(self, targeted: dict[str, SuiteRun], full: dict[str, SuiteRun]) -> None:
        self.targeted, self.full = targeted, full
        self.asked_targeted: list[str] = []
        self.asked_full: list[str] = []

    def run_targeted(
        self, work: list[tuple[str, list[object]]], jobs: int, progress: object
    ) -> dict[str, SuiteRun]:
        self.asked_targeted = [impl for impl, _ in work]
        return {impl: self.targeted[impl] for impl, _ in work}

    def run_full(self, impls: list[str], jobs: int, progress: object) -> dict[str, SuiteRun]:
        self.asked_full = list(impls)
        return {impl: self.full[impl] for impl in impls}


def mutants_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stages: Stages, *extra: str
) -> tuple[int, str]:
    monkeypatch.setitem(MUTANTS, "m", MUTANT)
    monkeypatch.setattr(orchestrate, "_targeted_runs", stages.run_targeted)
    monkeypatch.setattr(orchestrate, "_full_runs", stages.run_full)
    report = tmp_path / "mutants.md"
    argv = ["mutants", "--only", "m", "--report", f"markdown={report}", *extra]
    return main(argv), report.read_text("utf-8")


def test_a_kill_in_the_targeted_run_ends_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stages = Stages(
        {
            "direct": SuiteRun(impl="direct", scenarios=SUITE),
            "mutant:m": SuiteRun(impl="mutant:m", failed=(OWN,), scenarios=1),
        },
        {},
    )
    status, report = mutants_run(monkeypatch, tmp_path, stages)
    assert status == 0
    assert stages.asked_targeted == ["direct", "mutant:m"]
    assert stages.asked_full == []
    assert "Mode: targeted" in report
    assert "| killed | targeted run | 1 of 1 |" in report


def test_a_targeted_survivor_runs_the_whole_suite(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    targeted = {
        "direct": SuiteRun(impl="direct", scenarios=SUITE),
        "mutant:m": SuiteRun(impl="mutant:m", scenarios=1),
    }
    killed = Stages(
        targeted, {"mutant:m": SuiteRun(impl="mutant:m", failed=(OWN,), scenarios=SUITE)}
    )
    status, report = mutants_run(monkeypatch, tmp_path, killed)
    assert (status, killed.asked_full) == (0, ["mutant:m"])
    assert "| killed | full run | 1 of 5 |" in report

    by_others = Stages(targeted, {"mutant:m": SuiteRun(impl="mutant:m", failed=(OTHER,))})
    status, report = mutants_run(monkeypatch, tmp_path, by_others)
    assert status == 1
    assert "| killed, but not by its own IDs | full run |" in report

    survivor = Stages(targeted, {"mutant:m": SuiteRun(impl="mutant:m", scenarios=SUITE)})
    status, report = mutants_run(monkeypatch, tmp_path, survivor)
    assert status == 1
    assert "| SURVIVED | full run |" in report


def test_a_targeted_kill_the_control_shares_is_no_kill(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    control = SuiteRun(impl="direct", failed=(OWN,), scenarios=SUITE)
    stages = Stages(
        {"direct": control, "mutant:m": SuiteRun(impl="mutant:m", failed=(OWN,), scenarios=1)},
        {"mutant:m": SuiteRun(impl="mutant:m", failed=(OWN,), scenarios=SUITE)},
    )
    status, report = mutants_run(monkeypatch, tmp_path, stages)
    assert stages.asked_full == ["mutant:m"]  # escalated: its only killer fails anyway
    assert "| SURVIVED | full run |" in report
    assert status == 1  # and the control fails a scenario no expected failure explains
    assert "control (unmutated reference): FAILING" in report


def test_a_control_that_does_not_run_fails_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stages = Stages(
        {
            "direct": SuiteRun(impl="direct", error="exit status 3"),
            "mutant:m": SuiteRun(impl="mutant:m", failed=(OWN,), scenarios=1),
        },
        {},
    )
    status, report = mutants_run(monkeypatch, tmp_path, stages)
    assert status == 1
    assert "NOT RUN (exit status 3)" in report


def test_full_mode_runs_the_whole_suite_against_every_mutant(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stages = Stages(
        {},
        {
            "direct": SuiteRun(impl="direct", scenarios=SUITE),
            "mutant:m": SuiteRun(impl="mutant:m", failed=(OWN, OTHER), scenarios=SUITE),
        },
    )
    status, report = mutants_run(monkeypatch, tmp_path, stages, "--full")
    assert (status, stages.asked_targeted, stages.asked_full) == (0, [], ["direct", "mutant:m"])
    assert "Mode: full" in report
    assert "| killed | full run | 2 of 5 |" in report
