"""The runner's own semantics, on the in-process fake: what it sends, how it
checks, where it stops, and the sandbox it builds."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from conftest import WriteScenario

from conformance.errors import ScenarioError
from conformance.peers.direct import DirectConnector
from conformance.peers.fake_adapter import FakeEngine
from conformance.run import sandbox as sandbox_module
from conformance.run.results import Outcome, ScenarioResult
from conformance.run.runner import Runner, run_scenario
from conformance.run.sandbox import MIN_MTIME_STEP_NS, Sandbox
from conformance.suite.scenario import FinalFile, FsStep, Scenario, load_scenario, parse_scenario
from conformance.trees import remove_tree
from conformance.wire.connector import ConnectorOptions

HEAD = "id: sample\ntitle: t\nspec: [A-1]\nlevel: MUST\n"


class RecordingEngine(FakeEngine):
    """The fake, remembering every request it was sent."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        return super().handle(request)


@pytest.fixture
def recorded() -> list[dict[str, Any]]:
    RecordingEngine.requests = []
    return RecordingEngine.requests


def run(text: str, *, keep: bool = False) -> ScenarioResult:
    scenario = parse_scenario(HEAD + text)
    with Runner(
        DirectConnector(RecordingEngine, options=ConnectorOptions(timeout=5.0)), keep=keep
    ) as runner:
        return runner.run(scenario)


def commands(requests: list[dict[str, Any]]) -> list[str]:
    return [r["cmd"] for r in requests]


def test_begin_carries_the_sandbox_and_explicit_defaults(recorded: list[dict[str, Any]]) -> None:
    result = run(
        "setup:\n  env: {X: '{home}/x'}\n  cwd: sub\n"
        "  settings: {userSettings: {permissions: {deny: ['Read({root}/secret)']}}}\n"
        "steps:\n  - call: {name: Read, input: {file_path: '{root}/a.txt'}}\n"
        "    expect: {content: {regex: '^ok: Read$'}}\n"
    )
    assert result.outcome is Outcome.PASS, result.message
    begin = recorded[1]["session"]
    root = Path(begin["root"])
    assert begin["cwd"] == str(root / "sub")
    assert begin["env"] == {"HOME": str(root / "home"), "X": str(root / "home" / "x")}
    assert begin["settings"] == {
        "userSettings": {"permissions": {"deny": [f"Read({root}/secret)"]}}
    }
    assert (begin["prompt"], begin["test_tools"], begin["home"]) == (
        "allow",
        False,
        str(root / "home"),
    )
    assert root not in Path(begin["session_dir"]).parents
    assert recorded[2]["tool_use"] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Read",
        "input": {"file_path": str(root / "a.txt")},
    }
    assert commands(recorded) == ["hello", "begin", "call", "end"]
    assert not root.exists()  # cleaned up


def test_a_scenario_home_overrides_the_default(recorded: list[dict[str, Any]]) -> None:
    run("setup:\n  env: {HOME: /elsewhere}\nsteps:\n  - session: restart\n")
    assert recorded[1]["session"]["env"] == {"HOME": "/elsewhere"}


def test_session_restart_ends_and_begins_with_a_new_session_dir(
    recorded: list[dict[str, Any]],
) -> None:
    assert (
        run(
            "steps:\n  - call: {name: Read}\n  - session: restart\n  - call: {name: Read}\n"
        ).outcome
        is Outcome.PASS
    )
    assert commands(recorded) == ["hello", "begin", "call", "end", "begin", "call", "end"]
    first, second = recorded[1]["session"], recorded[4]["session"]
    assert first["root"] == second["root"]
    assert first["session_dir"] != second["session_dir"]
    assert [r["tool_use"]["id"] for r in recorded if r["cmd"] == "call"] == ["toolu_1", "toolu_2"]


def test_a_failing_step_is_located_and_the_later_steps_still_run(
    recorded: list[dict[str, Any]],
) -> None:
    result = run(
        "steps:\n"
        "  - call: {name: Read}\n    expect: {is_error: false}\n"
        "  - call: {name: Edit}\n    expect: {stage: validate, error_code: 7, is_error: false}\n"
        "  - call: {name: Write}\n"
    )
    assert (result.outcome, result.step) == (Outcome.FAIL, 2)
    assert result.where == "step 2 (call Edit, line 8)"
    assert [(m.path, m.expected, m.actual) for m in result.mismatches] == [
        ("stage", "validate", "done"),
        ("error_code", 7, None),
    ]
    assert commands(recorded) == ["hello", "begin", "call", "call", "call", "end"]


def test_message_steps_check_batches_results_and_events() -> None:
    ok = run(
        "steps:\n  - message: [{name: P, id: a}, {name: Q, id: b}]\n"
        "    expect: {batches: [[a], [b]], results: [null, {content: 'ok: Q'}],"
        " events: {before: [[a, b]]}}\n"
    )
    assert ok.outcome is Outcome.PASS, ok.message
    bad = run(
        "steps:\n  - message: [{name: P, id: a}, {name: Q, id: b}]\n"
        "    expect: {batches: [[a, b]], events: {overlap: [[a, b]]}}\n"
    )
    assert [m.path for m in bad.mismatches] == ["batches", "events.overlap[0]"]


def test_message_options_and_the_tools_command_are_sent(recorded: list[dict[str, Any]]) -> None:
    result = run(
        "steps:\n"
        "  - message: [{name: P, id: a}, {name: Q, id: b}]\n"
        "    streaming: true\n    block_delay_ms: 5\n    interrupt: {after_started: [a]}\n"
        "  - message: [{name: P}]\n"
        "  - tools: true\n    expect: {tools: {json_subset: [{name: Read}]}, deferred: []}\n"
        "  - tools: true\n    expect: {deferred: [Glob]}\n"
    )
    first, second = recorded[2], recorded[3]
    assert (first["streaming"], first["block_delay_ms"], first["interrupt"]) == (
        True,
        5,
        {"after_started": ["a"]},
    )
    assert set(second) == {"seq", "cmd", "content"}
    assert commands(recorded)[4:] == ["tools", "tools", "end"]
    assert (result.outcome, result.where) == (Outcome.FAIL, "step 4 (tools, line 13)")
    assert [(m.path, m.actual) for m in result.mismatches] == [("deferred", [])]


def test_raw_requests_are_sent_as_written_and_error_answers_are_data(
    recorded: list[dict[str, Any]],
) -> None:
    result = run(
        "steps:\n"
        "  - raw: {cmd: bogus}\n"
        "    expect: {response: {json_subset: {error: {kind: bad_request}}}}\n"
        "  - raw: {seq: 77, cmd: end, note: '{root}'}\n"
        "    expect: {response: {json_subset: {seq: 77, ok: true}}}\n"
        "  - call: {name: Read, input: not an object}\n"
    )
    assert result.outcome is Outcome.PASS, result.message
    assert recorded[2] == {"seq": 3, "cmd": "bogus"}
    assert recorded[3]["seq"] == 77
    assert recorded[3]["note"] == recorded[1]["session"]["root"]
    assert recorded[4]["seq"] == 4
    assert recorded[4]["tool_use"]["input"] == "not an object"


def test_final_files_are_checked_after_the_steps() -> None:
    result = run(
        'setup:\n  files:\n    a.txt: {text: "one\\n", mode: "0640"}\n'
        'steps:\n  - fs: {write: a.txt, text: "two\\n"}\n'
        "final:\n  files:\n"
        '    a.txt: {text: "one\\n", mode: "0600"}\n'
        "    b.txt: {contains: x}\n"
        "    c: {absent: true}\n"
    )
    assert (result.outcome, result.where, result.step) == (Outcome.FAIL, "final", None)
    assert [(m.path, m.actual) for m in result.mismatches][:2] == [
        ('final.files["a.txt"].text', "two\n"),
        ('final.files["a.txt"].mode', "0640"),
    ]
    assert result.mismatches[2].path == 'final.files["b.txt"]'


def test_an_impossible_fs_step_is_a_scenario_error() -> None:
    result = run("steps:\n  - fs: {delete: nothing-here}\n")
    assert (result.outcome, result.kind, result.step) == (Outcome.ERROR, "scenario", 1)
    assert "nothing-here" in result.message


def test_an_impossible_setup_is_a_scenario_error() -> None:
    result = run(
        "setup:\n  files:\n    a: {text: x}\n    a/b: {text: y}\nsteps:\n  - session: restart\n"
    )
    assert (result.outcome, result.kind, result.where) == (Outcome.ERROR, "scenario", "setup")


def test_not_applicable_never_touches_the_implementation(recorded: list[dict[str, Any]]) -> None:
    scenario = parse_scenario(HEAD + "requires: [bash]\nsteps:\n  - call: {name: Bash}\n")
    connector = DirectConnector(RecordingEngine)
    connector.start()
    result = run_scenario(scenario, connector, {"read"})
    connector.close()
    assert (result.outcome, result.reason) == (Outcome.NOT_APPLICABLE, "requires bash")
    assert commands(recorded) == ["hello"]


def test_a_feature_override_replaces_the_hello(load: Callable[..., Scenario]) -> None:
    scenario = load(HEAD + "requires: [read]\nsteps:\n  - session: restart\n")
    with Runner(DirectConnector(FakeEngine), features=["bash"]) as runner:
        assert runner.run(scenario).outcome is Outcome.NOT_APPLICABLE


def test_keep_leaves_the_sandbox_and_says_where() -> None:
    result = run(
        "setup:\n  files:\n    d: {dir: true, mode: '0555'}\nsteps:\n  - session: restart\n",
        keep=True,
    )
    kept = Path(result.message.split("sandbox kept: ")[1].rstrip("]"))
    assert (kept / "root" / "d").is_dir()
    remove_tree(kept)
    assert not kept.exists()


def test_area_and_path_come_from_the_file(write_scenario: WriteScenario) -> None:
    path = write_scenario(HEAD + "steps:\n  - session: restart\n", area="edit")
    with Runner(DirectConnector(FakeEngine)) as runner:
        result = runner.run(load_scenario(path))
    assert (result.area, result.path, result.spec, result.level) == (
        "edit",
        str(path),
        ("A-1",),
        "MUST",
    )


# -- the sandbox ----------------------------------------------------------------


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    box = Sandbox(tmp_path / "fixtures")
    yield box
    box.cleanup()


def mtime(path: Path) -> int:
    return os.stat(path, follow_symlinks=False).st_mtime_ns


def files(text: str) -> Scenario:
    return parse_scenario(HEAD + "setup:\n  files:\n" + text + "steps:\n  - session: restart\n")


def test_setup_materializes_every_kind_of_file(sandbox: Sandbox) -> None:
    scenario = files(
        "    t.txt: {text: 'at {root}', mtime: '-100s'}\n"
        "    deep/b.bin: {b64: 'AP8=', mode: '0600'}\n"
        "    d: {dir: true}\n"
        "    link: {symlink: t.txt}\n"
        "    pipe: {fifo: true}\n"
        "    big: {sparse: 1073741824}\n"
    )
    sandbox.materialize(scenario.setup.files, None)
    root = sandbox.root
    assert (root / "t.txt").read_text() == f"at {root}"
    assert (root / "deep" / "b.bin").read_bytes() == b"\x00\xff"
    assert stat.S_IMODE(os.stat(root / "deep" / "b.bin").st_mode) == 0o600
    assert (root / "d").is_dir()
    assert os.readlink(root / "link") == "t.txt"
    assert stat.S_ISFIFO(os.stat(root / "pipe").st_mode)
    assert os.stat(root / "big").st_size == 1 << 30
    assert mtime(root / "t.txt") < mtime(root / "d") - 90 * 10**9


def test_repeat_writes_the_text_or_bytes_that_many_times(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "REPEAT_BLOCK_BYTES", 8)  # many blocks and a rest
    scenario = files(
        "    a.txt: {text: 'ab', repeat: 11}\n"
        "    r.txt: {text: '{root}', repeat: 2}\n"
        "    b.bin: {b64: 'AP8=', repeat: 3}\n"
        "    one.txt: {text: 'x', repeat: 1}\n"
    )
    sandbox.materialize(scenario.setup.files, None)
    root = sandbox.root
    assert (root / "a.txt").read_text() == "ab" * 11
    assert (root / "r.txt").read_text() == f"{root}" * 2  # placeholders expand first
    assert (root / "b.bin").read_bytes() == b"\x00\xff" * 3
    assert (root / "one.txt").read_text() == "x"


def test_repeat_past_the_limit_after_expansion_is_a_setup_error(sandbox: Sandbox) -> None:
    scenario = files("    a.txt: {text: '{root}', repeat: 44739242}\n")  # 6 bytes as written
    with pytest.raises(ScenarioError, match="more than 268435456"):
        sandbox.materialize(scenario.setup.files, None)
    assert not (sandbox.root / "a.txt").exists()


def test_fs_writes_move_mtime_by_the_offset_or_at_least_two_seconds(sandbox: Sandbox) -> None:
    path = sandbox.root / "a.txt"
    sandbox.apply(FsStep(op="write", path="a.txt", text="one"))
    created = mtime(path)
    sandbox.apply(FsStep(op="write", path="a.txt", text="two"))
    assert mtime(path) >= created + MIN_MTIME_STEP_NS
    before = mtime(path)
    sandbox.apply(FsStep(op="write", path="a.txt", data=b"three", mtime=10.0))
    assert (mtime(path), path.read_bytes()) == (before + 10 * 10**9, b"three")
    sandbox.apply(FsStep(op="touch", path="a.txt", mtime=-100.0))
    assert (mtime(path), path.read_bytes()) == (before - 90 * 10**9, b"three")
    sandbox.apply(FsStep(op="touch", path="a.txt"))
    assert mtime(path) >= before - 88 * 10**9


def test_other_fs_steps(sandbox: Sandbox) -> None:
    root = sandbox.root
    for step in (
        FsStep(op="touch", path="new/t"),
        FsStep(op="mkdir", path="d/e"),
        FsStep(op="symlink", path="l", target="{root}/new/t"),
        FsStep(op="mkfifo", path="p"),
        FsStep(op="chmod", path="new/t", mode=0o444),
        FsStep(op="delete", path="d"),
    ):
        sandbox.apply(step)
    assert (root / "new" / "t").read_bytes() == b""
    assert stat.S_IMODE(os.stat(root / "new" / "t").st_mode) == 0o444
    assert os.readlink(root / "l") == str(root / "new" / "t")
    assert stat.S_ISFIFO(os.stat(root / "p").st_mode)
    assert not (root / "d").exists()


def test_final_checks_compare_bytes_exactly(sandbox: Sandbox) -> None:
    (sandbox.root / "crlf.txt").write_bytes(b"a\r\nb")
    (sandbox.root / "bin").write_bytes(b"\xff\x00")
    assert sandbox.check_final([FinalFile(path="crlf.txt", data=b"a\r\nb")]) == []
    (mismatch,) = sandbox.check_final([FinalFile(path="crlf.txt", text="a\nb")])
    assert (mismatch.expected, mismatch.actual) == ("a\nb", "a\r\nb")
    (mismatch,) = sandbox.check_final([FinalFile(path="bin", text="")])
    assert mismatch.actual == "b64:/wA="
    (mismatch,) = sandbox.check_final([FinalFile(path="crlf.txt", absent=True)])
    assert mismatch.actual == "a file"


def test_regex_expectations_escape_the_paths_they_mention(sandbox: Sandbox) -> None:
    expanded = sandbox.expand_expect(
        {"content": {"regex": "^{root}/a$"}, "output": {"contains": "{root}"}}
    )
    assert expanded["content"]["regex"].endswith("/a$")
    assert expanded["output"]["contains"] == str(sandbox.root)
    assert sandbox.expand_expect({"regex": "{root}"}) == {"regex": re.escape(str(sandbox.root))}
    assert sandbox.expand({"regex": "{root}"}) == {"regex": str(sandbox.root)}
