"""The SPEC.md model: sections, requirement items and their extent, evidence, annexes."""

from __future__ import annotations

import datetime
import textwrap
from pathlib import Path

import pytest

from conformance.suite.annexes import render_annex
from conformance.suite.evidence import load_evidence
from conformance.suite.spec import Spec, wrapped_length

SPEC = textwrap.dedent(
    """\
    # Title

    - **PRE-ITEM-1** (MAY) Before any section.

    ## 0. Conventions

    Prose.

    ### 0.5 Profiles

    - **PROFILE-SET-1** (MUST) The profiles.
      Rationale: one reason.
    - **PROFILE-OPEN-1** (SHOULD) Open IDs.
      Decision: kept for a reason.

    ## 4. Permissions

    - **PERM-ORDER-1** (MUST) The decision is the first of:
      1. a deny rule;
      2. otherwise `ask`.

    An informative paragraph that ends the item.

    - **PERM-RULE-2** (MUST) Which rules a tool consults:

    | Rule | Consulted by |
    |---|---|
    | `Read(path)` | Read |

      A rule on any other tool never matches.
      - **NESTED-ITEM-1** (MUST) A nested item is an item of its own.
    - **PERM-OLD-1** (MUST) An old-style item. **Decision:** inline.

    ### 4.1 Rules

    - **PERM-RULE-1** (MUST) A rule.
    """
)


def test_sections_carry_number_title_depth_and_labels() -> None:
    spec = Spec(SPEC)
    assert [(s.number, s.title, s.depth, s.line) for s in spec.sections] == [
        ("0", "Conventions", 2, 5),
        ("0.5", "Profiles", 3, 9),
        ("4", "Permissions", 2, 16),
        ("4.1", "Rules", 3, 34),
    ]
    assert [s.heading for s in spec.top_sections()] == ["0. Conventions", "4. Permissions"]
    assert spec.sections[1].label == "0.5 Profiles"
    assert spec.sections[1].top == "0"
    assert spec.section_labels() == {
        "PRE-ITEM-1": "preamble",
        "PROFILE-SET-1": "0.5 Profiles",
        "PROFILE-OPEN-1": "0.5 Profiles",
        "PERM-ORDER-1": "4 Permissions",
        "PERM-RULE-2": "4 Permissions",
        "NESTED-ITEM-1": "4 Permissions",
        "PERM-OLD-1": "4 Permissions",
        "PERM-RULE-1": "4.1 Rules",
    }


def test_items_run_over_indented_lines_and_tables_and_end_at_prose() -> None:
    spec = Spec(SPEC)
    order = spec.requirements["PERM-ORDER-1"]
    assert (order.line, order.last_line) == (18, 20)
    assert order.text.endswith("2. otherwise `ask`.")
    rule = spec.requirements["PERM-RULE-2"]
    assert (rule.line, rule.last_line) == (24, 30)
    assert "| `Read(path)` | Read |" in rule.text
    assert rule.length == 2  # the table rows count nothing
    nested = spec.requirements["NESTED-ITEM-1"]
    assert (nested.line, nested.top and nested.top.number) == (31, "4")
    assert [r.id for r in spec.in_section("4")] == [
        "PERM-ORDER-1",
        "PERM-RULE-2",
        "NESTED-ITEM-1",
        "PERM-OLD-1",
        "PERM-RULE-1",
    ]
    assert spec.requirements["PRE-ITEM-1"].top is None


def test_decisions_and_notes_are_found_in_both_spellings() -> None:
    spec = Spec(SPEC)
    assert [r.id for r in spec if r.is_decision] == ["PROFILE-OPEN-1", "PERM-OLD-1"]
    assert spec.requirements["PROFILE-SET-1"].notes == 1
    assert not spec.requirements["PROFILE-SET-1"].is_decision
    assert spec.requirements["PERM-RULE-1"].notes == 0
    assert (
        not Spec("- **A-B-1** (MUST) See the Decision above.\n").requirements["A-B-1"].is_decision
    )


def test_a_second_definition_is_a_problem_and_the_first_wins() -> None:
    spec = Spec("- **A-1** (MUST) x\n- **A-1** (MAY) y\n")
    assert [(p.line, p.field) for p in spec.problems] == [(2, "A-1")]
    assert spec.requirements["A-1"].level == "MUST"


def test_wrapped_length_counts_long_lines_as_wrapped_and_skips_tables() -> None:
    assert wrapped_length(["- a", "", "| table | row |", "  " + "x" * 98]) == 2
    assert wrapped_length(["y" * 101]) == 2
    assert wrapped_length(["y" * 241]) == 4


def test_features_come_from_the_table_after_proto_features() -> None:
    text = "- **PROTO-FEATURES-1** (MUST) Features:\n\n| name |\n|---|\n| `read` | x |\n"
    assert Spec(text).features() == {"read"}
    assert Spec("- **A-1** (MUST) x\n").features() is None


ENTRY = """\
PERM-ORDER-1:
  provenance: documented
  sources:
    - source: cc-docs
      says: Deny, then ask, then allow.
      date: 2026-12-02
      release: "2.1.88"
PERM-RULE-2:
  provenance: decided
  sources:
    - source: project
      says: Ours.
  profiles:
    claude-code-latest:
      variant: open
      because: measured otherwise
      measured: "2.1.332, 2026-12-02"
"""
SOURCES = "cc-docs: {kind: public, title: Docs}\nproject: {kind: project, title: Ours}\n"


def _tree(tmp_path: Path, evidence: str = ENTRY, sources: str = SOURCES) -> Path:
    (tmp_path / "SPEC.md").write_text(SPEC, "utf-8")
    directory = tmp_path / "spec" / "evidence"
    directory.mkdir(parents=True)
    (directory / "sources.yaml").write_text(sources, "utf-8")
    (directory / "04-permissions.yaml").write_text(evidence, "utf-8")
    return tmp_path / "SPEC.md"


def test_load_reads_the_evidence_beside_the_spec(tmp_path: Path) -> None:
    spec = Spec.load(_tree(tmp_path))
    assert spec.evidence.problems == ()
    assert spec.evidence.sections() == {"4"}
    assert spec.evidence.keys == {"4": (("PERM-ORDER-1", 1), ("PERM-RULE-2", 8))}
    citation = spec.evidence.entries["PERM-ORDER-1"].sources[0]
    assert citation.date == datetime.date(2026, 12, 2)
    assert citation.release == "2.1.88"
    assert spec.provenance_of("PERM-ORDER-1") == "documented"
    assert spec.provenances() == {"PERM-ORDER-1": "documented", "PERM-RULE-2": "decided"}
    with pytest.raises(KeyError):
        spec.provenance_of("PERM-RULE-1")
    assert spec.evidence.where["PERM-RULE-2"] == (
        str(tmp_path / "spec/evidence/04-permissions.yaml"),
        8,
    )


def test_a_spec_without_a_spec_directory_has_no_evidence(tmp_path: Path) -> None:
    (tmp_path / "SPEC.md").write_text(SPEC, "utf-8")
    spec = Spec.load(tmp_path / "SPEC.md")
    assert spec.evidence.entries == {}
    assert spec.evidence.problems == ()
    assert spec.annex_text("claude-code-latest") is None


def test_malformed_evidence_is_reported_per_field(tmp_path: Path) -> None:
    bad = textwrap.dedent(
        """\
        PERM-ORDER-1:
          provenance: guessed
          sources: []
        PERM-RULE-2:
          provenance: decided
          sources:
            - {source: project, says: x, release: 2.1}
          profiles:
            p: {variant: open, measured: m}
            q: {variant: plays it, measured: m, because: a reason}
          colour: blue
        PERM-RULE-2:
          provenance: decided
          sources: [{source: project, says: x}]
        """
    )
    spec = Spec.load(_tree(tmp_path, bad))
    found = [(p.line, p.field, p.message) for p in spec.evidence.problems]

    def has(line: int, field: str, start: str) -> bool:
        return any(f == field and m.startswith(start) and n == line for n, f, m in found)

    assert has(1, "PERM-ORDER-1.provenance", "Input should be 'documented', 'measured'")
    assert has(1, "PERM-ORDER-1.sources", "Tuple should have at least 1 item")
    assert has(4, "PERM-RULE-2.sources.0.release", "Input should be a valid string")
    assert has(4, "PERM-RULE-2.profiles.p", "Value error, an `open` variant needs `because`")
    assert has(4, "PERM-RULE-2.profiles.q", "Value error, `because` is for an `open` variant")
    assert has(4, "PERM-RULE-2.colour", "Extra inputs are not permitted")
    assert has(12, "PERM-RULE-2", "a second entry (first at ")
    assert "PERM-ORDER-1" not in spec.evidence.entries


def test_odd_files_and_yaml_errors_are_problems_not_crashes(tmp_path: Path) -> None:
    directory = tmp_path / "evidence"
    directory.mkdir()
    (directory / "notes.yaml").write_text("A-1: {}\n", "utf-8")
    (directory / "04-a.yaml").write_text("A-1: [unclosed\n", "utf-8")
    (directory / "04-b.yaml").write_text("{}\n", "utf-8")
    (directory / "05-c.yaml").write_text("- a list\n", "utf-8")
    found = load_evidence(directory)
    messages = sorted((Path(p.file).name, p.message) for p in found.problems)
    assert messages == [
        ("04-a.yaml", "YAML syntax: expected ',' or ']', but got '<stream end>'"),
        ("04-b.yaml", "a second evidence file for section 4 (first: 04-a.yaml)"),
        ("05-c.yaml", "must be a mapping"),
        ("notes.yaml", "an evidence file is named NN-SLUG.yaml, NN the section's number"),
        ("sources.yaml", "the sources file is missing"),
    ]


HEADER = "| ID | variant | measured on |"


def test_an_annex_lists_the_varying_ids_in_spec_order(tmp_path: Path) -> None:
    spec = Spec.load(_tree(tmp_path))
    varying = {"PERM-RULE-2": "open", "PROFILE-SET-1": "variant", "PERM-RULE-1": "open"}
    text = render_annex(spec, "claude-code-latest", varying, version="2.1.332")
    rows = [line for line in text.splitlines() if line.startswith("| ") and line != HEADER]
    assert text.startswith("# Annex to SPEC.md: profile `claude-code-latest`\n")
    assert "Claude Code 2.1.332" in text
    assert rows == [
        "| PROFILE-SET-1 | (stated in the SPEC.md item; no evidence file for its section yet) |  |",
        "| PERM-RULE-2 | open: measured otherwise | 2.1.332, 2026-12-02 |",
        "| PERM-RULE-1 | open |  |",
    ]
