"""``lint`` on temporary trees: SPEC coverage both ways, features, exclusions,
and the citations of SPEC IDs in the engine's code."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.analysis.lint import LintPaths, lint
from conformance.analysis.spec_lint import ProfileTable
from conformance.suite.registry import (
    DEFAULT_FEATURES,
    DEFAULT_SPEC,
    load_reasons,
)
from conformance.suite.spec import Spec

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
    (tmp_path / "uncited.yaml").write_text("{}\n")
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "cited.py").write_text(CITED)
    return LintPaths(
        scenarios=tmp_path / "scenarios",
        spec=tmp_path / "SPEC.md",
        features=tmp_path / "features.yaml",
        excluded=tmp_path / "excluded.yaml",
        code=tmp_path / "reference",
        uncited=tmp_path / "uncited.yaml",
    )


CITED = '''\
"""A module citing every requirement of SPEC where a citation counts."""


def read() -> None:
    """READ-ONE-1: reads."""
    return None  # READ-TWO-1 and NESTED-ITEM-2
'''


def add(tree: LintPaths, text: str, name: str = "one") -> None:
    (tree.scenarios / "read" / f"{name}.yaml").write_text(text)


def messages(tree: LintPaths, profiles: dict[str, ProfileTable] | None = None) -> list[str]:
    found = lint(tree, profiles=profiles)
    return [f"{Path(p.file).name}:{p.line}:{p.field}:{p.message}" for p in found]


def test_spec_ids_come_from_bold_list_items_with_a_level() -> None:
    spec = Spec(SPEC)
    assert {(r.id, r.level, r.line) for r in spec} == {
        ("READ-ONE-1", "MUST", 3),
        ("READ-TWO-1", "SHOULD", 4),
        ("NESTED-ITEM-2", "MAY", 5),
    }
    assert spec.problems == ()


def test_a_spec_id_defined_twice_is_a_problem(tree: LintPaths) -> None:
    tree.spec.write_text("- **A-1** (MUST) x\n- **A-1** (MAY) y\n")
    assert "SPEC.md:2:A-1:defined twice (first on line 1)" in messages(tree)


def test_a_fully_covered_tree_is_clean(tree: LintPaths) -> None:
    add(tree, scenario("[READ-ONE-1, READ-TWO-1]"))
    tree.excluded.write_text("NESTED-ITEM-2: checked by a property test instead\n")
    assert lint(tree) == []


def test_the_spec_evidence_beside_spec_md_is_checked(tree: LintPaths) -> None:
    add(tree, scenario("[READ-ONE-1, READ-TWO-1]"))
    tree.excluded.write_text("NESTED-ITEM-2: checked by a property test instead\n")
    evidence = tree.spec.parent / "spec" / "evidence"
    evidence.mkdir(parents=True)
    (evidence / "sources.yaml").write_text("project: {kind: project, title: Ours}\n")
    (evidence / "03-reads.yaml").write_text(
        "READ-ONE-1: {provenance: decided, sources: [{source: project, says: x}]}\n"
    )
    assert messages(tree, profiles={}) == [
        "03-reads.yaml:None::SPEC.md has no section 3",
        "03-reads.yaml:1:READ-ONE-1:defined in the preamble, not in section 3",
    ]
    assert lint(tree, profiles={}, strict_spec=True) == lint(tree, profiles={})


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
    tree.uncited.write_text("PROTO-FEATURES-1: enforced by the runner\n")
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
        assert Spec.load(DEFAULT_SPEC).features() in (None, set(features))


# -- the citations of SPEC IDs in the engine's code (SPEC-ID-1) ----------------

CODE_SPEC = """\
- **READ-ONE-1** (MUST) Reads.
- **SPEC-ID-1** (MUST) IDs: the document's name is a family too.
- **READ-RANGE-2** (MUST) Reads a range.
- **NBEDIT-INSERT-1** (MUST) Inserts.
- **HIST-1** (MUST) One word and a number.
- **PDF-PAGES-1** (MUST) Pages.
- **PDF-PAGES-2** (MUST) More pages.

The PDF prose uses PDF as a word, and NB as nothing.
"""
ALL_CITED = "# READ-ONE-1 SPEC-ID-1 READ-RANGE-2 NBEDIT-INSERT-1 HIST-1 PDF-PAGES-1 PDF-PAGES-2\n"


@pytest.fixture
def code_tree(tree: LintPaths) -> LintPaths:
    """A tree whose scenarios cover every requirement of CODE_SPEC, so that
    only the code rules can complain; the code cites every ID in cited.py."""
    tree.spec.write_text(CODE_SPEC)
    ids = "READ-ONE-1, SPEC-ID-1, READ-RANGE-2, NBEDIT-INSERT-1, HIST-1, PDF-PAGES-1, PDF-PAGES-2"
    add(tree, scenario(f"[{ids}]"))
    (tree.code / "cited.py").write_text(ALL_CITED)
    return tree


def code(tree: LintPaths, text: str, name: str = "mod.py") -> list[str]:
    """The problems of the tree once ``text`` is written to ``reference/<name>``."""
    (tree.code / name).write_text(textwrap.dedent(text))
    return messages(tree)


def test_a_fully_cited_code_tree_is_clean(code_tree: LintPaths) -> None:
    assert lint(code_tree) == []


def test_unknown_id_shaped_tokens_are_reported_with_file_and_line(code_tree: LintPaths) -> None:
    found = code(
        code_tree,
        """\
        X = "READ-NOPE-7"  # in a string: still ID-shaped
        # HIST-2 is one word, a family: ID-shaped
        def f() -> None:
            \"\"\"READ-RANGE-9 is unknown.\"\"\"
        """,
    )
    assert found == [
        "mod.py:1:READ-NOPE-7:READ-NOPE-7 is not a requirement ID of SPEC.md",
        "mod.py:2:HIST-2:HIST-2 is not a requirement ID of SPEC.md",
        "mod.py:4:READ-RANGE-9:READ-RANGE-9 is not a requirement ID of SPEC.md",
    ]


def test_an_abbreviated_id_names_the_id_it_stands_for(code_tree: LintPaths) -> None:
    assert code(code_tree, "# NBEDIT-INSERT-1 and INSERT-1\n") == [
        "mod.py:1:INSERT-1:INSERT-1 is an abbreviated ID: write NBEDIT-INSERT-1"
    ]


def test_tokens_that_are_not_id_shaped_pass(code_tree: LintPaths) -> None:
    text = """\
    # UTF-8, UTF-16LE, ISO-8859-1, SHA-256, CP-1252, X-1: no family, no two letter words
    ENCODING = "UTF-8"
    """
    assert code(code_tree, text) == []


def test_only_comments_and_function_or_class_docstrings_cite(code_tree: LintPaths) -> None:
    (code_tree.code / "cited.py").write_text("# READ-ONE-1 SPEC-ID-1 NBEDIT-INSERT-1 HIST-1\n")
    found = code(
        code_tree,
        """\
        \"\"\"The module docstring names PDF-PAGES-1: an overview, not a citation.\"\"\"
        MESSAGE = "PDF-PAGES-2 in a string is no citation"

        class Pages:
            \"\"\"READ-RANGE-2: a class docstring cites.\"\"\"
        """,
    )
    assert found == [
        "SPEC.md:6:PDF-PAGES-1:(MUST) cited by no comment or docstring in reference/"
        " and not in uncited.yaml",
        "SPEC.md:7:PDF-PAGES-2:(MUST) cited by no comment or docstring in reference/"
        " and not in uncited.yaml",
    ]


def test_uncited_yaml_lists_ids_with_reasons_never_stale_or_unknown(code_tree: LintPaths) -> None:
    (code_tree.code / "cited.py").write_text(
        "# READ-ONE-1 SPEC-ID-1 READ-RANGE-2 NBEDIT-INSERT-1\n"
    )
    code_tree.uncited.write_text(
        "HIST-1: a property of the whole design\n"
        "PDF-PAGES-1: ''\n"
        "READ-ONE-1: stale, cited in cited.py\n"
        "READ-GONE-1: removed from SPEC.md\n"
    )
    assert messages(code_tree) == [
        "SPEC.md:6:PDF-PAGES-1:(MUST) cited by no comment or docstring in reference/"
        " and not in uncited.yaml",
        "SPEC.md:7:PDF-PAGES-2:(MUST) cited by no comment or docstring in reference/"
        " and not in uncited.yaml",
        "uncited.yaml:2:PDF-PAGES-1:uncited.yaml: needs a non-empty text, got ''",
        "uncited.yaml:3:READ-ONE-1:listed as uncited but cited at reference/cited.py:1:"
        " remove the stale entry",
        "uncited.yaml:4:READ-GONE-1:not a requirement of SPEC.md",
    ]


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("# the READ-* rules", "'READ-*': a wildcard names no requirement"),
        ("# READ-RANGE-* here", "'READ-RANGE-*': a wildcard names no requirement"),
        ("# the READ-RANGE check", "'READ-RANGE': an ID without its number"),
        ("# (READ lookup)", "'READ': a family prefix used as a section name"),
        ("# NBEDIT backfill", "'NBEDIT': a family prefix used as a section name"),
        ("# see (HIST)", "'HIST': a family prefix used as a section name"),
        ("# PDF-PAGES-1/2", "'PDF-PAGES-1/2': write each ID in full"),
        ("# PDF-PAGES-1..2", "'PDF-PAGES-1..2': write each ID in full"),
        ("# (code 7)", "'code 7': an error code without the ID whose table gives it"),
        ("# codes 1 and 2", "'codes 1': an error code without the ID whose table gives it"),
    ],
)
def test_informal_citations_are_rejected(code_tree: LintPaths, line: str, what: str) -> None:
    assert code(code_tree, line + "\n") == [f"mod.py:1::informal citation {what}"]


def test_informal_citations_count_in_docstrings_module_ones_too(code_tree: LintPaths) -> None:
    found = code(
        code_tree,
        """\
        \"\"\"Pages (PDF-*).\"\"\"


        def f() -> None:
            \"\"\"First line.

            The READ-RANGE check (code 3).
            \"\"\"
        """,
    )
    assert found == [
        "mod.py:1::informal citation 'PDF-*': a wildcard names no requirement",
        "mod.py:7::informal citation 'READ-RANGE': an ID without its number",
        "mod.py:7::informal citation 'code 3': an error code without the ID whose table gives it",
    ]


@pytest.mark.parametrize(
    "line",
    [
        "# NB: a family word followed by a colon is prose",
        "# a PDF file: SPEC.md's prose uses PDF as a word",
        "# SPEC.md section 12, and what SPEC asks for: the document's name",
        "# READ-ONE-1 code 5: an error code beside its ID",
        "# exit code 1 and status code 2 are not error codes",
        "# ``READ-*`` and `READ-RANGE` in code spans are code",
        "# READONLY, READ_ONE, READ.md, read-range are not family words",
        "# X-* and HTTP-* are no families; (SPEC) is the document's name",
        "# the READ-ONE-1 check, READ-RANGE-2, and HIST-1",
    ],
)
def test_prose_that_is_no_informal_citation_passes(code_tree: LintPaths, line: str) -> None:
    assert code(code_tree, line + "\n") == []


def test_informal_forms_in_code_and_strings_are_not_citations(code_tree: LintPaths) -> None:
    text = 'PATTERN = "READ-* (READ lookup) code 7"  # (READ lookup)\n'
    assert code(code_tree, text) == [
        "mod.py:1::informal citation 'READ': a family prefix used as a section name"
    ]


def test_a_missing_code_tree_or_unparsable_file_is_a_problem(code_tree: LintPaths) -> None:
    assert code(code_tree, "def (:\n", name="broken.py")[0].startswith(
        "broken.py:None::cannot parse:"
    )
    (code_tree.code / "latin1.py").write_bytes(b"# caf\xe9\n")
    assert any(
        p.file == "reference/latin1.py" and p.message.startswith("cannot read:")
        for p in lint(code_tree)
    )
    missing = LintPaths(**{**vars_of(code_tree), "code": code_tree.code / "gone"})
    assert any("the code directory does not exist" in str(p) for p in lint(missing))


def vars_of(paths: LintPaths) -> dict[str, Path]:
    return {name: getattr(paths, name) for name in LintPaths.__dataclass_fields__}
