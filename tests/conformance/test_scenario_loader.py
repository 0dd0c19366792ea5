"""The scenario loader: valid files become frozen values; bad ones are refused
with every problem located by file, line and field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DATA, WriteScenario

from conformance.errors import Problem, ScenarioLoadError
from conformance.suite.scenario import (
    CACHE_ENV,
    CallStep,
    FsStep,
    MessageStep,
    Scenario,
    SessionStep,
    load_scenario,
    load_scenarios,
)

HEAD = """\
id: sample
title: A sample
spec: [READ-FORMAT-1]
level: MUST
"""


def problems(write: WriteScenario, text: str, name: str = "sample") -> list[Problem]:
    path = write(text, name)
    with pytest.raises(ScenarioLoadError) as info:
        load_scenario(path)
    assert all(p.file == str(path) for p in info.value.problems)
    return info.value.problems


def only(found: list[Problem]) -> Problem:
    assert len(found) == 1, found
    return found[0]


def test_a_full_scenario_loads_into_values(load: Callable[..., Scenario]) -> None:
    scenario = load(
        HEAD
        + """\
requires: [read, edit]
setup:
  env: {K: "v"}
  prompt: deny
  cwd: sub
  files:
    a.txt: {text: "hello\\n", mode: "0644", mtime: "-100s"}
    raw.bin: {b64: "AAE="}
    link: {symlink: a.txt}
steps:
  - call: {name: Read, input: {file_path: "{root}/a.txt"}, id: r1}
    expect: {is_error: false, content: {contains: hello}}
  - message: [{name: Probe, id: a}, {name: Probe}]
  - fs: {write: a.txt, text: "bye\\n", mtime: "+10s"}
  - session: restart
final:
  files:
    a.txt: {text: "bye\\n"}
    gone: {absent: true}
"""
    )
    assert scenario.id == "sample"
    assert scenario.requires == ("read", "edit")
    assert scenario.area == "area"
    assert scenario.setup.prompt == "deny"
    files = {f.path: f for f in scenario.setup.files}
    assert files["a.txt"].mode == 0o644
    assert files["a.txt"].mtime == -100.0
    assert files["raw.bin"].data == b"\x00\x01"
    assert files["link"].kind == "symlink"
    assert files["link"].target == "a.txt"
    call, message, fs, session = scenario.steps
    assert isinstance(call, CallStep)
    assert call.call.id == "r1"
    assert call.line == 15
    assert isinstance(message, MessageStep)
    assert [c.id for c in message.calls] == ["a", None]
    assert isinstance(fs, FsStep)
    assert (fs.op, fs.mtime) == ("write", 10.0)
    assert isinstance(session, SessionStep)
    assert [f.absent for f in scenario.final] == [False, True]


def test_defaults_are_prompt_allow_and_no_test_tools(load: Callable[..., Scenario]) -> None:
    scenario = load(HEAD + "steps:\n  - call: {name: Read}\n")
    assert scenario.setup.prompt == "allow"
    assert scenario.setup.test_tools is False
    assert scenario.requires == ()


def test_unknown_field_is_named_with_its_line_and_a_suggestion(
    write_scenario: WriteScenario,
) -> None:
    text = HEAD + "steps:\n  - call: {name: Read}\n    expect: {stag: done}\n"
    problem = only(problems(write_scenario, text))
    assert (problem.line, problem.field) == (7, "steps[0].expect.stag")
    assert "did you mean 'stage'" in problem.message


def test_missing_required_field_points_at_the_document(write_scenario: WriteScenario) -> None:
    problem = only(
        problems(write_scenario, "id: sample\ntitle: t\nspec: [A-1]\nsteps: [{session: restart}]\n")
    )
    assert problem.field == ""
    assert "level" in problem.message


def test_unquoted_octal_mode_is_explained(write_scenario: WriteScenario) -> None:
    text = (
        HEAD + "setup:\n  files:\n    a.txt: {text: x, mode: 0644}\nsteps:\n  - session: restart\n"
    )
    problem = only(problems(write_scenario, text))
    assert (problem.line, problem.field) == (7, 'setup.files["a.txt"].mode')
    assert "quote it" in problem.message


@pytest.mark.parametrize(("plain", "reads_as"), [("on", "True"), ("no", "False"), ("1:30", "90")])
def test_yaml_1_1_surprises_are_refused(
    write_scenario: WriteScenario, plain: str, reads_as: str
) -> None:
    text = HEAD + f"steps:\n  - call: {{name: Edit, input: {{new_string: {plain}}}}}\n"
    problem = only(problems(write_scenario, text))
    assert (problem.line, problem.field) == (6, "steps[0].call.input.new_string")
    assert f"YAML 1.1 reads {plain!r} as {reads_as}" in problem.message


def test_file_paths_must_stay_inside_the_root(write_scenario: WriteScenario) -> None:
    text = HEAD + "setup:\n  files:\n    ../up: {text: x}\nsteps:\n  - session: restart\n"
    problem = only(problems(write_scenario, text))
    assert (problem.line, problem.field) == (7, 'setup.files["../up"]')


def test_a_step_with_two_kinds_gets_one_clear_message(write_scenario: WriteScenario) -> None:
    text = HEAD + "steps:\n  - {call: {name: X}, fs: {delete: a}}\n"
    problem = only(problems(write_scenario, text))
    assert (problem.line, problem.field) == (6, "steps[0]")
    assert "exactly one of call, message, fs, session" in problem.message


def test_a_mapping_literal_that_is_no_matcher_is_refused(write_scenario: WriteScenario) -> None:
    text = HEAD + "steps:\n  - call: {name: X}\n    expect:\n      content: {contain: x}\n"
    problem = only(problems(write_scenario, text))
    assert (problem.line, problem.field) == (8, "steps[0].expect.content")
    assert "equals" in problem.message


def test_every_problem_is_reported_not_just_the_first(write_scenario: WriteScenario) -> None:
    text = HEAD.replace("MUST", "SOMETIMES") + "steps:\n  - fs: {chmod: a}\n  - session: later\n"
    found = problems(write_scenario, text)
    assert {p.field for p in found} == {"level", "steps[0].fs", "steps[1].session"}


def test_duplicate_keys_are_refused(write_scenario: WriteScenario) -> None:
    problem = only(problems(write_scenario, HEAD + "title: again\nsteps:\n  - session: restart\n"))
    assert (problem.line, problem.field, problem.message) == (5, "title", "duplicate key")


def test_yaml_values_that_are_not_json_are_refused(write_scenario: WriteScenario) -> None:
    text = HEAD + "steps:\n  - call: {name: X, input: {when: 2024-01-01}}\n"
    problem = only(problems(write_scenario, text))
    assert (problem.line, problem.field) == (6, "steps[0].call.input.when")
    assert "quote it" in problem.message


def test_yaml_syntax_errors_have_a_line(write_scenario: WriteScenario) -> None:
    problem = only(problems(write_scenario, HEAD + "steps: [\n"))
    assert problem.line is not None
    assert problem.message.startswith("YAML syntax")


def test_id_must_equal_the_file_stem(write_scenario: WriteScenario) -> None:
    problem = only(problems(write_scenario, HEAD + "steps:\n  - session: restart\n", name="other"))
    assert (problem.line, problem.field) == (1, "id")
    assert "'other'" in problem.message


def test_semantic_checks_name_their_fields(write_scenario: WriteScenario) -> None:
    text = HEAD + (
        "setup:\n  files:\n    a: {b64: '!!'}\n"
        "steps:\n"
        "  - call: {name: X}\n    expect: {content: {regex: '(open'}}\n"
        "  - message: [{name: P, id: a}, {name: P, id: a}]\n"
        "    expect: {batches: [[a, z]], results: [{}], events: {overlap: [[a, y]]}}\n"
        "    interrupt: {after_started: [x]}\n"
    )
    found = {(p.line, p.field): p.message for p in problems(write_scenario, text)}
    assert "not valid base64" in found[(7, "setup.files.a.b64")]
    assert "bad regular expression" in found[(10, "steps[0].expect.content.regex")]
    assert "used twice" in found[(11, "steps[1].message")]
    assert "1 results for 2 calls" in found[(12, "steps[1].expect.results")]
    assert "'z'" in found[(12, "steps[1].expect.batches[0]")]
    assert "'y'" in found[(12, "steps[1].expect.events.overlap[0]")]
    assert "'x'" in found[(13, "steps[1].interrupt.after_started[0]")]


def test_repeat_needs_text_or_b64_and_stays_under_256_mib(write_scenario: WriteScenario) -> None:
    text = HEAD + (
        "setup:\n  files:\n"
        "    d: {dir: true, repeat: 2}\n"
        "    big: {text: 'ab', repeat: 134217729}\n"
        "    ok: {b64: 'AP8=', repeat: 3}\n"
        "steps:\n  - session: restart\n"
    )
    found = {(p.line, p.field): p.message for p in problems(write_scenario, text)}
    assert found == {
        (7, "setup.files.d.repeat"): "repeat needs text or b64",
        (8, "setup.files.big.repeat"): "repeat makes 268435458 bytes, more than 268435456",
    }


def test_load_scenarios_reports_duplicate_ids_and_keeps_going(tmp_path: Path) -> None:
    for area in ("one", "two"):
        path = tmp_path / area / "same.yaml"
        path.parent.mkdir()
        path.write_text(HEAD.replace("sample", "same") + "steps:\n  - session: restart\n")
    (tmp_path / "two" / "broken.yaml").write_text("id: [\n")
    scenarios, errors = load_scenarios([tmp_path], root=tmp_path)
    assert [s.area for s in scenarios] == ["one"]
    assert sorted(Path(e.path).name for e in errors) == ["broken.yaml", "same.yaml"]
    assert any("duplicate id" in str(e) for e in errors)


def test_the_example_data_scenarios_load() -> None:
    scenarios, errors = load_scenarios([DATA / "suite"], root=DATA / "suite")
    assert errors == []
    assert {s.area for s in scenarios} == {"basic", "extra"}


def test_a_loaded_scenario_is_cached_by_content_and_an_edit_misses(
    write_scenario: WriteScenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    body = HEAD + "steps:\n  - call: {name: Read, input: {file_path: '{root}/a'}}\n"
    path = write_scenario(body)
    first = load_scenario(path)
    assert len(list(cache.rglob("*.pickle"))) == 1
    monkeypatch.setattr("conformance.suite.scenario.load_located", _no_parse)
    assert load_scenario(path) == first  # from the cache: no YAML parsed
    path.write_text(body.replace("A sample", "Another"))
    with pytest.raises(AssertionError, match="parsed"):
        load_scenario(path)  # the text changed: parsed again
    monkeypatch.setenv(CACHE_ENV, "off")
    with pytest.raises(AssertionError, match="parsed"):
        load_scenario(path)


def test_a_file_with_problems_is_not_cached(
    write_scenario: WriteScenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    path = write_scenario(HEAD + "steps: []\nbogus: 1\n")
    for _ in range(2):
        with pytest.raises(ScenarioLoadError):
            load_scenario(path)
    assert not list(cache.rglob("*.pickle"))


def _no_parse(text: str, file: str) -> None:
    raise AssertionError(f"{file} parsed")
