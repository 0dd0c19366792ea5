"""The mutants: the registry, their faults, and that the suite kills a known one."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import reference.filestate
import reference.tools.write
from conformance import Runner, connect, load_scenario
from conformance.cli import main
from conformance.connectors import ConnectorOptions
from conformance.mutants import MUTANTS, Mutant, MutantEngine, get_mutant
from conformance.mutants.base import session_fault
from conformance.mutants.orchestrate import Killer, SuiteRun, judge
from conformance.registry import DEFAULT_SCENARIOS, DEFAULT_SPEC, parse_spec
from conformance.results import Outcome

OPTIONS = ConnectorOptions(timeout=20.0, hello_timeout=60.0)
REQUIRED = {
    "no-read-before-write",
    "staleness-ignored",
    "staleness-by-mtime-only",
    "staleness-gt-not-ne",
    "dedup-ignores-range",
    "dedup-ignores-mtime",
    "dedup-after-write",
    "dedup-killswitch-ignored",
    "truncate-instead-of-throw",
    "no-size-gate",
    "off-by-one-offset",
    "long-lines-not-cut",
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
    requirements, problems = parse_spec(DEFAULT_SPEC.read_text("utf-8"), str(DEFAULT_SPEC))
    assert not problems
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


def test_every_process_patch_applies_in_a_process_of_its_own() -> None:
    # One child process; each patch is undone (module dicts restored) before the next.
    code = textwrap.dedent(
        """
        import sys
        from conformance.mutants import MUTANTS
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


def test_a_process_mutant_is_killed_in_its_own_process_and_leaks_nothing() -> None:
    assert get_mutant("staleness-ignored").scope == "process"
    original = reference.filestate.is_stale
    stale = load_scenario(scenario("write", "write-stale-after-external-write"))
    with Runner(connect("mutant:staleness-ignored", OPTIONS)) as runner:
        result = runner.run(stale)
    assert result.outcome is Outcome.FAIL, result.message
    assert reference.filestate.is_stale is original
    assert vars(reference.tools.write)["is_stale"] is original


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
