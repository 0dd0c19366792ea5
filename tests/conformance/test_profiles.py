"""Behaviour profiles (SPEC.md 0.5): names, annexes, the runner, the connector, diffs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conformance.analysis.fidelity import Report, profile_line
from conformance.analysis.release_diff import Unspecified, diff_markdown, diff_reports
from conformance.analysis.spec_lint import check_spec, reference_profiles
from conformance.cli import main
from conformance.peers.agent.adapter import AgentAdapter
from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.agent.install import InstalledAgent
from conformance.peers.claude_code.releases import release_definition
from conformance.suite.registry import DEFAULT_SPEC
from conformance.suite.scenario import scenario_schema
from conformance.suite.spec import Spec
from conformance.wire.profiles import PROFILE_NAMES, holds_under, placeholders_of, played_profiles
from reference.engine import Engine
from reference.profiles import (
    DOCUMENTED,
    PROFILES,
    STATE_NOTE,
    VARIANT_IDS,
    Profile,
    varying_ids,
)

SPEC_TEXT = DEFAULT_SPEC.read_text("utf-8")
_PROFILES_LINE = "Profiles: "


def _profiles_lines(spec: Spec) -> dict[str, str]:
    """ID -> its item's ``Profiles:`` line (joined), for the sections without evidence yet."""
    out: dict[str, str] = {}
    for requirement in spec:
        if requirement.top is not None and requirement.top.number in spec.evidence.sections():
            continue
        text = " ".join(line.strip() for line in requirement.text.splitlines())
        if _PROFILES_LINE in text:
            out[requirement.id] = text.split(_PROFILES_LINE, 1)[1]
    return out


def test_the_profile_names_agree_everywhere() -> None:
    assert tuple(PROFILES) == PROFILE_NAMES
    enum = scenario_schema()["properties"]["profiles"]["items"]["enum"]
    assert tuple(enum) == PROFILE_NAMES
    for name in PROFILE_NAMES:
        assert f"`{name}`" in SPEC_TEXT


def test_every_varying_id_is_stated_for_its_profile_and_no_other_is() -> None:
    """SPEC.md 0.5: the evidence's ``profiles:`` statements (and, in a section not yet
    converted, the item's ``Profiles:`` line) say exactly what the profile table varies."""
    spec = Spec.load(DEFAULT_SPEC)
    table = reference_profiles()
    assert check_spec(spec, table) == []
    lines = _profiles_lines(spec)
    expected: dict[str, dict[str, str]] = {}
    for name, profile in table.items():
        for rid, kind in profile.varying.items():
            top = spec.requirements[rid].top
            if top is None or top.number not in spec.evidence.sections():
                expected.setdefault(rid, {})[name] = kind
    assert set(lines) == set(expected)
    for rid, by_profile in expected.items():
        for name, kind in by_profile.items():
            assert f"{name}: " in lines[rid], (rid, name)
            said_open = re.search(rf"{re.escape(name)}: open\b", lines[rid]) is not None
            assert said_open == (kind == "open"), (rid, name)
    stated = set(lines) | {rid for rid, entry in spec.evidence.entries.items() if entry.profiles}
    assert set(VARIANT_IDS.values()) <= stated
    assert not varying_ids(DOCUMENTED)


def test_holds_under_and_played_profiles() -> None:
    assert holds_under((), "claude-code-latest")
    assert holds_under(("documented", "claude-code-latest"), "claude-code-latest")
    assert not holds_under(("documented",), "claude-code-2.1.88")
    assert played_profiles({}) == ("documented",)
    assert played_profiles({"profiles": ["claude-code-2.1.88"]}) == ("claude-code-2.1.88",)
    assert played_profiles({"profiles": []}) == ()


def test_the_engine_lists_and_plays_its_profiles(tmp_path: Path) -> None:
    engine = Engine()
    hello = engine.handle({"seq": 1, "cmd": "hello", "protocol": 1})
    assert hello["profiles"] == list(PROFILE_NAMES)
    assert "profiles" in hello["features"]
    begin = {"seq": 2, "cmd": "begin", "session": {"root": str(tmp_path)}}
    assert engine.handle(begin)["ok"] is True
    assert engine.session is not None
    assert engine.session.profile is DOCUMENTED
    latest = {**begin, "session": {"root": str(tmp_path), "profile": "claude-code-latest"}}
    assert engine.handle(latest)["ok"] is True
    assert engine.session.profile is PROFILES["claude-code-latest"]
    unknown = {**begin, "session": {"root": str(tmp_path), "profile": "claude-code-9"}}
    answer = engine.handle(unknown)
    assert answer["error"]["kind"] == "unsupported"
    assert engine.session.profile is PROFILES["claude-code-latest"]  # the open one stays


def _scenario(directory: Path, sid: str, profiles: list[str] | None) -> None:
    field = f"profiles: [{', '.join(profiles)}]\n" if profiles else ""
    directory.joinpath(f"{sid}.yaml").write_text(
        f"id: {sid}\ntitle: t\nspec: [WRITE-READ-1]\nlevel: MUST\n{field}requires: [write]\n"
        'setup:\n  files:\n    a.txt: {text: "old\\n"}\n'
        'steps:\n  - call: {name: Write, input: {file_path: "{root}/a.txt", content: "x\\n"}}\n'
        "    expect: {is_error: false}\n",
        "utf-8",
    )


def test_run_profile_judges_one_contract_and_records_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    _scenario(suite, "unread-write-latest", ["claude-code-latest"])
    _scenario(suite, "unread-write-any", None)
    report = tmp_path / "r.jsonl"
    argv = ["run", str(suite), "--no-progress", "--report", f"jsonl={report}"]
    status = main([*argv, "--profile", "claude-code-latest"])
    records = [json.loads(line) for line in report.read_text("utf-8").splitlines()]
    header, results = records[0], {r["id"]: r for r in records if r.get("type") == "result"}
    assert status == 0
    assert header["profile"] == "claude-code-latest"
    assert header["plays"] == list(PROFILE_NAMES)
    assert results["unread-write-latest"]["outcome"] == "pass"
    assert results["unread-write-any"]["outcome"] == "pass"  # unread Write: latest's variant
    status = main([*argv, "--profile", "claude-code-2.1.88"])
    records = [json.loads(line) for line in report.read_text("utf-8").splitlines()]
    results = {r["id"]: r for r in records if r.get("type") == "result"}
    assert results["unread-write-latest"]["outcome"] == "not_applicable"
    assert "not claude-code-2.1.88" in results["unread-write-latest"]["reason"]
    assert results["unread-write-any"]["outcome"] == "fail"  # 2.1.88 refuses an unread file
    assert status == 1
    capsys.readouterr()


def _claude_code(definition: AgentDefinition) -> AgentAdapter:
    nowhere = Path("/nonexistent")
    return AgentAdapter(definition, InstalledAgent(nowhere, nowhere, nowhere), turn_timeout=1.0)


def test_the_claude_code_connector_plays_its_release_only() -> None:
    assert release_definition("2.1.88", "2.1.88").profiles == ("claude-code-2.1.88",)
    latest = release_definition("latest", "2.1.400")
    assert (latest.profiles, latest.install.version) == (("claude-code-latest",), "2.1.400")
    assert release_definition("latest", "2.1.332").name == "claude-code-2.1.332"
    assert release_definition("2.1.332", "2.1.332").profiles == ("claude-code-latest",)
    unmeasured = release_definition("2.1.100", "2.1.100")
    assert unmeasured.profiles == ()
    assert "profiles" not in unmeasured.features
    assert unmeasured.install.program == release_definition("2.1.88", "2.1.88").install.program
    adapter = _claude_code(release_definition("2.1.88", "2.1.88"))
    hello = adapter.handle({"seq": 1, "cmd": "hello", "protocol": 1})
    assert hello["profiles"] == ["claude-code-2.1.88"]
    begin = {"root": "/tmp", "profile": "claude-code-latest"}
    answer = adapter.handle({"seq": 2, "cmd": "begin", "session": begin})
    assert answer["error"]["kind"] == "unsupported"


def _record(rid: str, outcome: str, spec: list[str], **levels: str) -> dict[str, Any]:
    return {
        "type": "result",
        "id": rid,
        "outcome": outcome,
        "spec": spec,
        "levels": {lv: {"verdict": v} for lv, v in levels.items()},
    }


def test_diff_groups_changed_scenarios_by_section_and_id() -> None:
    header = {"implementation": {"name": "x", "version": "1"}, "impl": "x:1"}
    a = Report(
        header,
        [
            _record("s-same", "pass", ["WRITE-READ-1"], behaviour="pass"),
            _record("s-moved", "pass", ["WRITE-READ-1", "READ-DEDUP-1"], behaviour="pass"),
            _record("s-worded", "fail", ["READ-DEDUP-1"], behaviour="pass", rendering="pass"),
            _record("s-gone", "pass", ["READ-DEDUP-1"], behaviour="pass"),
        ],
    )
    b = Report(
        {**header, "implementation": {"name": "x", "version": "2"}},
        [
            _record("s-same", "pass", ["WRITE-READ-1"], behaviour="pass"),
            _record("s-moved", "fail", ["WRITE-READ-1", "READ-DEDUP-1"], behaviour="fail"),
            _record("s-worded", "fail", ["READ-DEDUP-1"], behaviour="pass", rendering="fail"),
            _record("s-new", "pass", ["READ-DEDUP-1"], behaviour="pass"),
        ],
    )
    changes, only_a, only_b = diff_reports(a, b)
    assert [c.id for c in changes] == ["s-moved", "s-worded"]
    assert changes[0].behaviour_changed
    assert not changes[1].behaviour_changed
    assert (only_a, only_b) == (["s-gone"], ["s-new"])
    page = diff_markdown(
        a,
        b,
        Spec(SPEC_TEXT),
        command="toolconf diff a b",
        unspecified=[Unspecified("A new input", "Read takes `allow_large`.", ("s-new",))],
        edited=frozenset({"s-worded"}),
    )
    assert "# What changed from x 1 to x 2" in page
    assert page.index("## 12.4 Dedup of unchanged re-reads") < page.index("## 13 Write")
    assert "- **WRITE-READ-1** (MUST): 1 in behaviour, 0 in rendering or identity only" in page
    assert "`s-moved`: behaviour pass → fail" in page
    assert "s-worded (edited)" in page
    assert "## Not specified" in page
    assert "**A new input**: Read takes `allow_large`." in page
    assert "only in A (1): `s-gone`" in page


def test_fidelity_names_the_profile_and_whether_it_is_played() -> None:
    assert "did not say" in profile_line({})
    played = {"profile": "claude-code-2.1.88", "plays": ["claude-code-2.1.88"]}
    assert "agreement run" in profile_line(played)
    other = {"profile": "claude-code-latest", "plays": ["claude-code-2.1.88"]}
    assert "another contract" in profile_line(other)


def test_a_profile_is_immutable_and_defaults_to_documented() -> None:
    profile = Profile(name="x")
    assert profile.write_read == DOCUMENTED.write_read == "full"
    with pytest.raises(AttributeError):
        profile.dedup = False  # type: ignore[misc]


def test_a_release_does_not_claim_the_tools_it_was_measured_to_lack() -> None:
    def features(version: str) -> list[str]:
        adapter = _claude_code(release_definition(version, version))
        answer: list[str] = adapter.handle({"seq": 1, "cmd": "hello", "protocol": 1})["features"]
        return answer

    assert {"glob", "grep"} <= set(features("2.1.88"))
    assert not {"glob", "grep"} & set(features("2.1.332"))
    assert {"read", "write", "edit", "bash"} <= set(features("2.1.332"))


def test_a_profile_placeholder_is_empty_except_under_its_profile() -> None:
    assert placeholders_of("documented") == {"{notebook_end}": "", "{state_note}": ""}
    assert placeholders_of("claude-code-2.1.88") == placeholders_of("documented")
    latest = {"{notebook_end}": "\n", "{state_note}": STATE_NOTE}
    assert placeholders_of("claude-code-latest") == latest
