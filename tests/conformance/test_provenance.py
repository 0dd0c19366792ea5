"""Where a scenario's rules come from (PROTO-PROVENANCE-1): the scenario's provenance, the
run's selection by it, and the behaviour figures per provenance in the console and reports."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conformance.analysis.console import level_lines, provenance_figures, provenance_line
from conformance.analysis.reports import RunInfo, write_report
from conformance.cli import main
from conformance.run.results import LevelCount, Outcome, ScenarioResult
from conformance.suite.provenance import provenance_filter, scenario_provenance
from conformance.suite.registry import DEFAULT_SPEC
from conformance.suite.spec import Spec

KNOWN = {"D-1": "documented", "D-2": "documented", "M-1": "measured", "X-1": "decided"}


def test_a_scenario_is_as_strong_as_its_weakest_id() -> None:
    assert scenario_provenance(["D-1", "D-2"], KNOWN) == "documented"
    assert scenario_provenance(["D-1", "M-1"], KNOWN) == "measured"
    assert scenario_provenance(["M-1", "X-1", "D-1"], KNOWN) == "decided"
    assert scenario_provenance(["D-1", "NEW-1"], KNOWN) is None  # an ID without one
    assert scenario_provenance([], KNOWN) is None


def test_the_filter_keeps_the_scenarios_of_the_chosen_provenances_and_broken_files() -> None:
    documented = provenance_filter(["documented"], KNOWN)
    assert documented({"spec": ["D-1", "D-2"]})
    assert not documented({"spec": ["D-1", "M-1"]})
    assert not documented({"spec": ["D-1", "NEW-1"]})
    assert documented({"spec": "D-1"})  # only validation can say what is wrong with it
    both = provenance_filter(["documented", "measured"], KNOWN)
    assert both({"spec": ["D-1", "M-1"]})
    assert not both({"spec": ["X-1"]})


def judged(sid: str, spec: tuple[str, ...], *, held: bool) -> ScenarioResult:
    count = LevelCount(1) if held else LevelCount(0, 1)
    outcome = Outcome.PASS if held else Outcome.FAIL
    return ScenarioResult(id=sid, outcome=outcome, spec=spec, levels={"behaviour": count})


RESULTS = [
    judged("a", ("D-1",), held=True),
    judged("b", ("D-1", "D-2"), held=True),
    judged("c", ("D-1", "M-1"), held=False),
    judged("d", ("X-1", "D-1"), held=False),
    judged("e", ("X-1",), held=True),
    judged("f", ("NEW-1",), held=False),  # no provenance: in no figure
]


def test_the_behaviour_figure_of_each_provenance() -> None:
    figures = provenance_figures(RESULTS, KNOWN)
    assert [(p, f.held, f.observed) for p, f in figures.items()] == [
        ("documented", 2, 2),
        ("measured", 0, 1),
        ("decided", 1, 2),
    ]
    line = "behaviour by provenance: documented 100% (2/2), measured 0% (0/1), decided 50% (1/2)"
    assert provenance_line(RESULTS, KNOWN) == line
    assert line in level_lines(RESULTS, KNOWN)
    assert not any("provenance" in text for text in level_lines(RESULTS))


def test_reports_carry_the_figures_per_provenance_and_the_selection() -> None:
    info = RunInfo(impl="x", provenances=KNOWN, selected=("documented",))
    out = io.StringIO()
    write_report("jsonl", RESULTS, info, out)
    header, *_, footer = [json.loads(line) for line in out.getvalue().splitlines()]
    assert header["provenance"] == ["documented"]
    assert footer["provenance"]["decided"] == {"held": 1, "observed": 2, "unobserved": 0}
    markdown = io.StringIO()
    write_report("markdown", RESULTS, info, markdown)
    text = markdown.getvalue()
    assert "Behaviour by provenance: documented 100% (2/2)" in text
    assert "Judged: scenarios whose SPEC IDs are each documented (PROTO-PROVENANCE-1)." in text
    plain = io.StringIO()
    write_report("jsonl", RESULTS, RunInfo(impl="x"), plain)
    header, *_, footer = [json.loads(line) for line in plain.getvalue().splitlines()]
    assert header["provenance"] == ["documented", "measured", "decided"]
    assert "provenance" not in footer  # no SPEC provenances given, no figures


def test_every_spec_id_has_a_provenance() -> None:
    spec = Spec.load(DEFAULT_SPEC)
    assert set(spec.provenances()) == set(spec.requirements)


def write_scenario(directory: Path, sid: str, spec: str) -> None:
    (directory / f"{sid}.yaml").write_text(
        f"id: {sid}\ntitle: t\nspec: [{spec}]\nlevel: MUST\nrequires: [read]\n"
        'setup:\n  files:\n    a.txt: {text: "x\\n"}\n'
        'steps:\n  - call: {name: Read, input: {file_path: "{root}/a.txt"}}\n'
        '    expect: {is_error: false, content: {contains: "1\\tx"}}\n'
    )


def test_run_judges_only_the_chosen_provenances(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provenances = Spec.load(DEFAULT_SPEC).provenances()
    assert (provenances["READ-RANGE-1"], provenances["READ-SIZE-2"]) == ("documented", "measured")
    assert provenances["PROTO-PROBE-1"] == "decided"
    write_scenario(tmp_path, "doc", "READ-RANGE-1")
    write_scenario(tmp_path, "mixed", "READ-RANGE-1, READ-SIZE-2")
    write_scenario(tmp_path, "ours", "READ-RANGE-1, PROTO-PROBE-1")
    report = tmp_path / "r.jsonl"
    argv = ["run", str(tmp_path), "--no-progress", "--report", f"jsonl={report}"]
    assert main([*argv, "--provenance", "documented"]) == 0
    out = capsys.readouterr().out
    assert "judging the scenarios whose SPEC IDs are each documented" in out
    assert "behaviour by provenance: documented 100% (1/1), measured - (0/0)" in out
    ids = [r["id"] for r in map(json.loads, report.read_text().splitlines()) if "id" in r]
    assert ids == ["doc"]
    assert main([*argv, "--provenance", "measured", "--provenance", "documented"]) == 0
    ids = [r["id"] for r in map(json.loads, report.read_text().splitlines()) if "id" in r]
    assert sorted(ids) == ["doc", "mixed"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "documented 100% (1/1), measured 100% (1/1), decided 100% (1/1)" in out
