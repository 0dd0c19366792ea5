"""The behaviour table's data: its shape, and its ties to the scenarios and SPEC.md (lint)."""

from __future__ import annotations

from pathlib import Path

from conformance.analysis.lint import LintPaths, lint
from conformance.suite.behaviours import check_behaviours, load_behaviours, provenance_of
from conformance.suite.registry import DEFAULT_BEHAVIOURS

GOOD = """\
- id: reads
  group: Reading
  title: Reads read
  question: Does it read?
  spec: [READ-A-1, READ-B-1]
  scenarios: [r1, r2]
"""


def _problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "behaviours.yaml"
    path.write_text(text)
    _, problems = load_behaviours(path)
    return [str(p) for p in problems]


def test_a_well_formed_file_loads_in_order(tmp_path: Path) -> None:
    path = tmp_path / "behaviours.yaml"
    path.write_text(GOOD + GOOD.replace("id: reads", "id: rereads"))
    found, problems = load_behaviours(path)
    assert problems == []
    assert [b.id for b in found] == ["reads", "rereads"]
    assert found[0].spec == ("READ-A-1", "READ-B-1")
    assert found[1].line == 7


def test_shape_problems_are_located(tmp_path: Path) -> None:
    assert "the behaviours must be a list" in _problems(tmp_path, "reads: {}\n")[0]
    odd = GOOD.replace("  question: Does it read?\n", "  colour: red\n")
    problems = _problems(tmp_path, odd)
    assert any("unknown field 'colour'" in p for p in problems)
    assert any("question: needs one line of text" in p for p in problems)
    assert any(
        "id: lower-case words" in p for p in _problems(tmp_path, GOOD.replace("reads", "Reads"))
    )
    assert any(
        "spec: needs a non-empty list" in p
        for p in _problems(tmp_path, GOOD.replace("[READ-A-1, READ-B-1]", "[]"))
    )
    assert any("listed twice" in p for p in _problems(tmp_path, GOOD.replace("r2]", "r1]")))
    twice = _problems(tmp_path, GOOD + GOOD)
    assert twice == [f"{tmp_path / 'behaviours.yaml'}:7: reads: defined twice (first on line 1)"]


def test_ties_to_scenarios_and_spec_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "behaviours.yaml"
    path.write_text(GOOD.replace("READ-B-1", "READ-C-1").replace("[r1, r2]", "[r1, r2, gone]"))
    found, _ = load_behaviours(path)
    cited = {"r1": ("READ-A-1",), "r2": ("WRITE-A-1",)}
    problems = [p.message for p in check_behaviours(found, cited, {"READ-A-1", "WRITE-A-1"}, "f")]
    assert problems == [
        "scenario 'r2' cites none of READ-A-1, READ-C-1 (it cites WRITE-A-1)",
        "scenario 'gone' does not exist",
        "READ-C-1 is not a requirement of SPEC.md",
    ]
    path.write_text(GOOD)
    found, _ = load_behaviours(path)
    uncited = check_behaviours(
        found, {"r1": ("READ-A-1",), "r2": ("READ-A-1",)}, {"READ-A-1", "READ-B-1"}, "f"
    )
    assert [p.message for p in uncited] == [
        "READ-B-1 is cited by none of the behaviour's scenarios"
    ]


def test_provenance_groups_ids_in_a_fixed_order() -> None:
    grouped = provenance_of(
        ["A-1", "B-1", "C-1", "D-1"], {"A-1": "decided", "B-1": "documented", "C-1": "decided"}
    )
    assert grouped == {"documented": ("B-1",), "decided": ("A-1", "C-1")}


def test_the_lint_checks_a_behaviour_table_it_is_given(tmp_path: Path) -> None:
    path = tmp_path / "behaviours.yaml"
    path.write_text(GOOD)
    problems = [str(p) for p in lint(LintPaths(behaviours=path))]
    assert any("scenario 'r1' does not exist" in p for p in problems)
    assert any("READ-A-1 is not a requirement of SPEC.md" in p for p in problems)


def test_the_shipped_table_has_30_to_45_behaviours_in_named_groups() -> None:
    found, problems = load_behaviours(DEFAULT_BEHAVIOURS)
    assert problems == []
    assert 30 <= len(found) <= 45
    assert len({b.group for b in found}) >= 8
