"""The lint's checks of SPEC.md's shape, evidence and annexes, on small trees."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from conformance.analysis.spec_lint import (
    ProfileTable,
    check_spec,
    reference_profiles,
    write_annexes,
)
from conformance.cli import main
from conformance.suite.registry import DEFAULT_SPEC
from conformance.suite.spec import Spec

SPEC = textwrap.dedent(
    """\
    # Spec

    ## 0. Conventions

    - **SPEC-ID-1** (MUST) IDs are unique.

    ## 4. Permissions

    - **PERM-ORDER-1** (MUST) Deny, then ask, then allow.
    - **PERM-PATH-1** (MUST) Paths are anchored.
      Decision: `root` stands in for every source's location.
    """
)
SOURCES = textwrap.dedent(
    """\
    dispatch-deep-dive: {kind: seed, title: A walk through the dispatch pipeline}
    measured: {kind: measurement, title: Runs of the original}
    project: {kind: project, title: This project}
    """
)
SECTION_0 = textwrap.dedent(
    """\
    SPEC-ID-1:
      provenance: decided
      sources: [{source: project, says: Stable IDs.}]
    """
)
SECTION_4 = textwrap.dedent(
    """\
    PERM-ORDER-1:
      provenance: documented
      sources:
        - source: dispatch-deep-dive
          says: Deny rules first, allow rules last.
      profiles:
        claude-code-latest:
          variant: open
          because: It refused what an allow rule covered.
          measured: "2.1.332, 2026-12-02"
          scenarios: [perm-order]
    PERM-PATH-1:
      provenance: decided
      sources: [{source: project, says: The protocol has no source locations.}]
      decision: The protocol has no source locations, so root stands in for them.
    """
)
TABLE = {
    "claude-code-latest": ProfileTable("2.1.332", {"PERM-ORDER-1": "open"}),
    "claude-code-2.1.88": ProfileTable("2.1.88", {}),
}


@pytest.fixture
def spec_md(tmp_path: Path) -> Path:
    (tmp_path / "SPEC.md").write_text(SPEC, "utf-8")
    evidence = tmp_path / "spec" / "evidence"
    evidence.mkdir(parents=True)
    (evidence / "sources.yaml").write_text(SOURCES, "utf-8")
    (evidence / "00-conventions.yaml").write_text(SECTION_0, "utf-8")
    (evidence / "04-permissions.yaml").write_text(SECTION_4, "utf-8")
    write_annexes(Spec.load(tmp_path / "SPEC.md"), TABLE)
    return tmp_path / "SPEC.md"


def found(
    spec_md: Path, *, strict: bool = False, table: dict[str, ProfileTable] | None = None
) -> list[str]:
    spec = Spec.load(spec_md)
    problems = check_spec(
        spec, TABLE if table is None else table, strict=strict, scenario_ids={"perm-order"}
    )
    ordered = sorted(problems, key=lambda p: (Path(p.file).name, p.line or 0, p.field, p.message))
    return [f"{Path(p.file).name}:{p.line}:{p.field}:{p.message}" for p in ordered]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new), "utf-8")


def evidence(spec_md: Path, name: str = "04-permissions.yaml") -> Path:
    return spec_md.parent / "spec" / "evidence" / name


def test_a_sound_tree_is_clean_strict_or_not(spec_md: Path) -> None:
    assert found(spec_md) == []
    assert found(spec_md, strict=True) == []
    annex = (spec_md.parent / "spec" / "annex-claude-code-latest.md").read_text("utf-8")
    assert (
        "| PERM-ORDER-1 | open: It refused what an allow rule covered. | 2.1.332, 2026-12-02 |"
        in annex
    )


def test_nothing_is_checked_without_a_spec_directory_unless_strict(tmp_path: Path) -> None:
    (tmp_path / "SPEC.md").write_text(SPEC, "utf-8")
    assert found(tmp_path / "SPEC.md") == []
    strict = found(tmp_path / "SPEC.md", strict=True)
    assert "SPEC.md:3::section 0. Conventions has no evidence file" in strict
    assert "SPEC.md:7::section 4. Permissions has no evidence file" in strict


def test_every_id_of_a_checked_section_has_an_entry(spec_md: Path) -> None:
    path = evidence(spec_md)
    text = path.read_text("utf-8")
    path.write_text(text[: text.index("PERM-PATH-1:")], "utf-8")
    assert found(spec_md) == [
        "SPEC.md:10:PERM-PATH-1:no evidence entry (every ID has one, with its provenance)"
    ]


def test_only_sections_with_a_file_are_checked_until_strict(spec_md: Path) -> None:
    evidence(spec_md, "00-conventions.yaml").unlink()
    assert found(spec_md) == []
    assert found(spec_md, strict=True) == [
        "SPEC.md:3::section 0. Conventions has no evidence file",
        "SPEC.md:5:SPEC-ID-1:no evidence entry (every ID has one, with its provenance)",
    ]


def test_evidence_keys_are_ids_of_the_files_section_and_appear_once(spec_md: Path) -> None:
    with evidence(spec_md).open("a", encoding="utf-8") as out:
        out.write("PERM-GONE-1:\n  provenance: decided\n  sources: [{source: project, says: x}]\n")
        out.write("SPEC-ID-1:\n  provenance: decided\n  sources: [{source: project, says: x}]\n")
    (spec_md.parent / "spec" / "evidence" / "09-state.yaml").write_text("{}\n", "utf-8")
    problems = found(spec_md)
    assert "04-permissions.yaml:16:PERM-GONE-1:not a requirement of SPEC.md" in problems
    assert any(
        p.startswith("04-permissions.yaml:19:SPEC-ID-1:a second entry (first at ") for p in problems
    )
    assert (
        "04-permissions.yaml:19:SPEC-ID-1:defined in section 0. Conventions, not in section 4"
        in problems
    )
    assert "09-state.yaml:None::SPEC.md has no section 9" in problems


def test_a_decision_needs_its_reason_and_a_reason_needs_its_decision(spec_md: Path) -> None:
    edit(
        evidence(spec_md),
        "  decision: The protocol has no source locations, so root stands in for them.\n",
        "",
    )
    edit(
        evidence(spec_md),
        "      says: Deny rules first, allow rules last.\n",
        "      says: Deny first.\n  decision: why\n",
    )
    assert found(spec_md) == [
        "SPEC.md:9:PERM-ORDER-1:its evidence entry gives a `decision`, "
        "but the item has no `Decision:`",
        "SPEC.md:10:PERM-PATH-1:a Decision without a `decision` in its evidence entry",
    ]


def test_sources_must_be_listed_and_fit_the_provenance(spec_md: Path) -> None:
    edit(evidence(spec_md), "source: dispatch-deep-dive", "source: project")
    edit(
        evidence(spec_md),
        "  sources: [{source: project, says: The protocol",
        "  sources: [{source: nowhere, says: The protocol",
    )
    edit(
        evidence(spec_md),
        "PERM-PATH-1:\n  provenance: decided",
        "PERM-PATH-1:\n  provenance: measured",
    )
    assert found(spec_md) == [
        "04-permissions.yaml:1:PERM-ORDER-1:documented, but cites no seed and no public source",
        "04-permissions.yaml:12:PERM-PATH-1:cites 'nowhere', which sources.yaml does not list",
        "04-permissions.yaml:12:PERM-PATH-1:measured, but cites no measurement",
    ]


def test_named_scenarios_must_exist(spec_md: Path) -> None:
    edit(evidence(spec_md), "scenarios: [perm-order]", "scenarios: [perm-order, perm-gone]")
    assert found(spec_md) == [
        "04-permissions.yaml:1:PERM-ORDER-1:names the scenario 'perm-gone', which does not exist"
    ]


def test_items_are_short_with_one_note_and_no_profiles_line(spec_md: Path) -> None:
    long_rule = "".join(f"  line {n} of a long rule.\n" for n in range(12))
    edit(
        spec_md,
        "- **PERM-ORDER-1** (MUST) Deny, then ask, then allow.\n",
        "- **PERM-ORDER-1** (MUST) Deny, then ask, then allow.\n" + long_rule,
    )
    edit(
        spec_md,
        "  Decision: `root` stands in for every source's location.\n",
        "  Decision: `root` stands in.\n  Rationale: also this.\n"
        "  Profiles: claude-code-2.1.88: open.\n",
    )
    write_annexes(Spec.load(spec_md), TABLE)
    assert found(spec_md) == [
        "SPEC.md:9:PERM-ORDER-1:13 lines; an item has at most 12",
        "SPEC.md:22:PERM-PATH-1:a `Profiles:` line: "
        "state the variant under `profiles:` in its evidence",
        "SPEC.md:22:PERM-PATH-1:more than one Rationale:/Decision: sentence",
    ]


def test_file_and_line_pointers_are_refused_in_items_and_evidence(spec_md: Path) -> None:
    edit(spec_md, "Deny, then ask, then allow.", "As seed 002 (line 64) says, deny first.")
    edit(
        evidence(spec_md),
        "says: Deny rules first, allow rules last.",
        "says: 002_a7e716a20e361dea.txt line 64",
    )
    edit(spec_md, "# Spec\n", "# Spec\n\nPublic facts line 674 says so.\n")
    problems = found(spec_md)
    assert [p.split(":")[:2] for p in problems] == [
        ["04-permissions.yaml", "5"],
        ["SPEC.md", "11"],
    ]
    assert "'seed 002 (line 6' points into a document by file and line" in problems[1]
    strict = found(spec_md, strict=True)
    assert any(p.startswith("SPEC.md:3::'Public facts line 6' points") for p in strict)


def test_profile_statements_and_the_table_agree(spec_md: Path) -> None:
    table = {
        "claude-code-latest": ProfileTable(
            "2.1.332", {"PERM-ORDER-1": "variant", "PERM-PATH-1": "open"}
        ),
        "claude-code-2.1.88": ProfileTable("2.1.88", {"NOT-IN-SPEC-1": "open"}),
    }
    latest = "claude-code-latest"
    write_annexes(Spec.load(spec_md), table)
    assert found(spec_md, table=table) == [
        f"04-permissions.yaml:1:PERM-ORDER-1.profiles.{latest}:"
        f"says open under {latest}; the profile table says variant",
        "04-permissions.yaml:12:PERM-PATH-1.profiles:"
        f"the profile table varies it under {latest} (open): state it",
        "SPEC.md:None:NOT-IN-SPEC-1:"
        "the profile table varies NOT-IN-SPEC-1 under claude-code-2.1.88: not in SPEC.md",
    ]
    unvaried = {latest: ProfileTable(None, {}), "claude-code-2.1.88": ProfileTable(None, {})}
    write_annexes(Spec.load(spec_md), unvaried)
    assert found(spec_md, table=unvaried) == [
        f"04-permissions.yaml:1:PERM-ORDER-1.profiles.{latest}:"
        f"the profile table does not vary it under {latest}"
    ]
    unknown = {"claude-code-2.1.88": ProfileTable(None, {})}
    (spec_md.parent / "spec" / f"annex-{latest}.md").unlink()
    assert found(spec_md, table=unknown) == [
        f"04-permissions.yaml:1:PERM-ORDER-1.profiles.{latest}:"
        f"'{latest}' is not a profile with an annex (claude-code-2.1.88)"
    ]


RUN = "run `python -m conformance spec annexes`"


def test_annexes_must_be_current_and_belong_to_a_profile(spec_md: Path) -> None:
    annexes = spec_md.parent / "spec"
    edit(
        evidence(spec_md), "because: It refused what an allow rule covered.", "because: It refused."
    )
    (annexes / "annex-claude-code-2.1.88.md").unlink()
    (annexes / "annex-claude-code-9.md").write_text("x\n", "utf-8")
    assert found(spec_md) == [
        "annex-claude-code-2.1.88.md:None::the annex of claude-code-2.1.88 is missing: " + RUN,
        "annex-claude-code-9.md:None::an annex of no profile",
        "annex-claude-code-latest.md:None::the annex of claude-code-latest is stale: " + RUN,
    ]
    changed = write_annexes(Spec.load(spec_md), TABLE)
    assert sorted(p.name for p in changed) == [
        "annex-claude-code-2.1.88.md",
        "annex-claude-code-latest.md",
    ]
    assert write_annexes(Spec.load(spec_md), TABLE) == []


def test_the_reference_table_names_every_profile_but_the_documented_one() -> None:
    table = reference_profiles()
    assert set(table) == {"claude-code-2.1.88", "claude-code-latest"}
    assert table["claude-code-2.1.88"].version == "2.1.88"
    assert table["claude-code-2.1.88"].varying["PERM-READDENY-1"] == "variant"
    assert table["claude-code-latest"].varying["REG-MCP-1"] == "open"
    assert table["claude-code-latest"].varying["TEXT-ENC-2"] == "open"
    assert table["claude-code-latest"].varying["REG-SEARCH-1"] == "variant"


def test_the_spec_annexes_command_rewrites_what_is_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(DEFAULT_SPEC, tmp_path / "SPEC.md")
    shutil.copytree(DEFAULT_SPEC.parent / "spec", tmp_path / "spec")
    for annex in (tmp_path / "spec").glob("annex-*.md"):
        annex.unlink()
    assert main(["spec", "annexes", "--spec-file", str(tmp_path / "SPEC.md")]) == 0
    assert capsys.readouterr().out.endswith("spec annexes: 2 changed\n")
    for name in ("annex-claude-code-2.1.88.md", "annex-claude-code-latest.md"):
        written = (tmp_path / "spec" / name).read_text("utf-8")
        assert written == (DEFAULT_SPEC.parent / "spec" / name).read_text("utf-8")
    assert main(["spec", "annexes", "--spec-file", str(tmp_path / "SPEC.md")]) == 0
    assert capsys.readouterr().out == "spec annexes: 0 changed\n"
