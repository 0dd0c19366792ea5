"""``lint`` on temporary trees: SPEC coverage both ways, features, exclusions."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.lint import LintPaths, lint
from conformance.registry import (
    DEFAULT_FEATURES,
    DEFAULT_SPEC,
    load_reasons,
    parse_spec,
    spec_features,
)

SPEC = """\
# Spec

- **READ-ONE-1** (MUST) Reads.
- **READ-TWO-1** (SHOULD) Reads more.
  - **NESTED-ITEM-2** (MAY) An indented item counts too.
- **Session**: a term, not a requirement.
Text mentioning **READ-ONE-1** (MUST) outside a list item is no definition.
"""


def scenario(
    spec_ids: str, name: str = "one", requires: str = "[read]", title: str = "Reads a file"
) -> str:
    return textwrap.dedent(
        f"""\
        id: {name}
        title: {title}
        spec: {spec_ids}
        level: MUST
        requires: {requires}
        steps:
          - call: {{name: Read}}
        """
    )


@pytest.fixture
def tree(tmp_path: Path) -> LintPaths:
    (tmp_path / "scenarios" / "read").mkdir(parents=True)
    (tmp_path / "SPEC.md").write_text(SPEC)
    (tmp_path / "features.yaml").write_text("read: The Read tool\nedit: The Edit tool\n")
    (tmp_path / "excluded.yaml").write_text("{}\n")
    return LintPaths(
        scenarios=tmp_path / "scenarios",
        spec=tmp_path / "SPEC.md",
        features=tmp_path / "features.yaml",
        excluded=tmp_path / "excluded.yaml",
    )


def add(tree: LintPaths, text: str, name: str = "one") -> None:
    (tree.scenarios / "read" / f"{name}.yaml").write_text(text)


def messages(tree: LintPaths) -> list[str]:
    return [f"{Path(p.file).name}:{p.line}:{p.field}:{p.message}" for p in lint(tree)]


def test_spec_ids_come_from_bold_list_items_with_a_level() -> None:
    found, problems = parse_spec(SPEC)
    assert {(r.id, r.level, r.line) for r in found.values()} == {
        ("READ-ONE-1", "MUST", 3),
        ("READ-TWO-1", "SHOULD", 4),
        ("NESTED-ITEM-2", "MAY", 5),
    }
    assert problems == []


def test_a_spec_id_defined_twice_is_a_problem() -> None:
    _, problems = parse_spec("- **A-1** (MUST) x\n- **A-1** (MAY) y\n")
    assert [(p.line, p.field) for p in problems] == [(2, "A-1")]


def test_a_fully_covered_tree_is_clean(tree: LintPaths) -> None:
    add(tree, scenario("[READ-ONE-1, READ-TWO-1]"))
    tree.excluded.write_text("NESTED-ITEM-2: checked by a property test instead\n")
    assert lint(tree) == []


def test_uncovered_requirements_are_listed_with_their_spec_line(tree: LintPaths) -> None:
    add(tree, scenario("[READ-ONE-1]"))
    assert messages(tree) == [
        "SPEC.md:4:READ-TWO-1:(SHOULD) covered by no scenario and not in excluded.yaml",
        "SPEC.md:5:NESTED-ITEM-2:(MAY) covered by no scenario and not in excluded.yaml",
    ]


def test_unknown_cited_ids_unknown_features_and_should_titles(tree: LintPaths) -> None:
    add(
        tree,
        scenario("[READ-ONE-1, READ-NOPE-1]", requires="[read, teleport]", title="It should read"),
    )
    tree.excluded.write_text("READ-TWO-1: r\nNESTED-ITEM-2: r\n")
    found = messages(tree)
    assert any("READ-NOPE-1 is not a requirement" in m for m in found)
    assert any("unknown feature 'teleport'" in m for m in found)
    assert any("no 'should' in titles" in m for m in found)
    assert len(found) == 3


def test_exclusions_must_exist_have_reasons_and_not_be_covered(tree: LintPaths) -> None:
    add(tree, scenario("[READ-ONE-1, READ-TWO-1]"))
    tree.excluded.write_text("READ-ONE-1: stale\nNESTED-ITEM-2: ''\nREAD-GONE-1: removed\n")
    assert messages(tree) == [
        "SPEC.md:5:NESTED-ITEM-2:(MAY) covered by no scenario and not in excluded.yaml",
        "excluded.yaml:1:READ-ONE-1:excluded but covered by a scenario: remove the stale exclusion",
        "excluded.yaml:2:NESTED-ITEM-2:excluded.yaml: needs a non-empty text, got ''",
        "excluded.yaml:3:READ-GONE-1:not a requirement of SPEC.md",
    ]


def test_scenario_load_problems_duplicates_and_yml_files_are_reported(tree: LintPaths) -> None:
    tree.excluded.write_text("READ-TWO-1: r\nNESTED-ITEM-2: r\n")
    add(tree, scenario("[READ-ONE-1]"))
    (tree.scenarios / "other").mkdir()
    (tree.scenarios / "other" / "one.yaml").write_text(scenario("[READ-ONE-1]"))
    add(tree, scenario("[READ-ONE-1]", name="wrong-name"), name="two")
    (tree.scenarios / "read" / "three.yml").write_text("")
    found = messages(tree)
    assert any("duplicate id" in m for m in found)
    assert any(m.startswith("two.yaml:1:id:") for m in found)
    assert any(m.startswith("three.yml:None::scenario files end in .yaml") for m in found)
    assert len(found) == 3


def test_features_yaml_must_match_the_spec_feature_table(tree: LintPaths) -> None:
    add(tree, scenario("[READ-ONE-1, READ-TWO-1]"))
    table = "- **PROTO-FEATURES-1** (MUST) Features:\n\n| feature | what |\n|---|---|\n"
    tree.spec.write_text(SPEC + table + "| `read` | Read |\n| `glob` | G |\n\nAfter.\n")
    tree.excluded.write_text("NESTED-ITEM-2: r\nPROTO-FEATURES-1: table\n")
    assert messages(tree) == [
        "features.yaml:None:edit:not a feature of SPEC.md (PROTO-FEATURES-1)",
        "features.yaml:None:glob:SPEC.md (PROTO-FEATURES-1) names 'glob': register it",
    ]


def test_the_package_feature_registry_matches_spec_md() -> None:
    features, _, problems = load_reasons(DEFAULT_FEATURES, "features.yaml")
    assert problems == []
    assert set(features) >= {
        *("read", "write", "edit", "dedup", "token_gate", "images", "pdf", "notebooks"),
        *("notebook_edit", "glob", "grep", "bash", "permissions", "hooks", "scheduler"),
        *("streaming", "result_persistence", "test_tools"),
    }
    if DEFAULT_SPEC.exists():
        assert spec_features(DEFAULT_SPEC.read_text()) in (None, set(features))
