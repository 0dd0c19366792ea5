"""``python -m conformance lint``: the suite checks itself.

- every scenario file loads (schema, id equal to the file stem), ids are unique,
  and titles do not say "should" (a scenario states a behaviour);
- every ``requires`` names a feature of ``features.yaml`` (one line each), and
  ``features.yaml`` lists exactly the features of SPEC.md's PROTO-FEATURES-1
  table when SPEC.md has one;
- every SPEC ID a scenario cites exists in SPEC.md;
- every behaviour of ``behaviours.yaml`` is well formed, each of its scenarios
  exists and cites one of its SPEC IDs, and each of those IDs exists and is
  cited by one of its scenarios (``conformance.suite.behaviours``);
- every SPEC.md requirement is covered by a scenario or excluded, with a
  reason, in ``excluded.yaml``; an excluded ID must exist and must not also be
  covered (a stale exclusion hides nothing and misleads);
- SPEC.md's items, their evidence (``spec/evidence/``) and the profile
  annexes (``spec/annex-*.md``) agree, as ``conformance.analysis.spec_lint``
  checks.

And between SPEC.md and the engine's code (``reference/``, every ``*.py``),
both ways (SPEC-ID-1; ``conformance.analysis.citations`` does the scanning):

- **ID-shaped tokens exist.** A token of upper-case words and a number, the
  words joined by ``-`` and each starting with a letter, is ID-shaped when it
  has two words or more (``READ-DEDUP-1``), or one word that is a SPEC family
  (the first word of an ID: ``HIST-1``) or an ID's last word and number
  (``INSERT-1`` of ``NBEDIT-INSERT-1``, reported as an abbreviation). Every
  ID-shaped token on any line, code and strings included, must be a
  requirement ID of SPEC.md. ``UTF-8``, ``SHA-256`` and ``ISO-8859-1`` are not
  ID-shaped.
- **Every requirement is cited.** A citation is a requirement ID in a comment
  or in a function's or class's docstring: on or next to the code that
  enforces it. A module docstring is an overview and cites nothing. Every
  requirement, whatever its level, is cited at least once or listed in
  ``uncited.yaml`` with the reason no line of ``reference/`` enforces it; a
  listed ID must exist and must not also be cited.
- **No informal citations.** In comments and docstrings (module docstrings
  too), outside backquoted code spans, each of these is a problem:

  - a wildcard: a family, or an ID's leading words, then ``-*`` (``SCHED-*``,
    ``PROTO-PROBE-*``);
  - an ID without its number: the leading words of an ID, two or more
    (``PERM-ORDER``);
  - a family used as a section name: a family word alone, followed by a
    space and a lower-case word or by ``)`` (``(REG lookup)``, ``DISP
    backfill``), unless SPEC.md's own prose uses the word alone (``PDF``,
    ``TOOL``) or it is the document's name (``SPEC``); a family word in any
    other place (``NB:``, ``PDF file``) is prose;
  - a shorthand for several IDs: an ID followed by ``/N``, ``..N``, ``-N`` or
    ``–N`` (``FILE-PATH-2/3``): write each ID in full;
  - an error code without its ID: ``code N`` or ``codes N`` (not ``exit
    code N`` or ``status code N``) on a line that names no requirement ID
    (``NBEDIT-VALIDATE-1 code 5`` is precise, ``(code 8)`` is not).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from conformance.analysis.citations import Vocabulary, scan_tree
from conformance.analysis.spec_lint import ProfileTable, check_spec, reference_profiles
from conformance.errors import Problem
from conformance.suite.behaviours import check_behaviours, load_behaviours
from conformance.suite.registry import (
    DEFAULT_BEHAVIOURS,
    DEFAULT_CODE,
    DEFAULT_EXCLUDED,
    DEFAULT_FEATURES,
    DEFAULT_SCENARIOS,
    DEFAULT_SPEC,
    DEFAULT_UNCITED,
    load_reasons,
)
from conformance.suite.scenario import Scenario, load_scenarios
from conformance.suite.spec import Spec

__all__ = ["LintPaths", "lint"]

_SHOULD = re.compile(r"\bshould\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class LintPaths:
    """The files lint reads; the defaults are the package's own."""

    scenarios: Path = DEFAULT_SCENARIOS
    spec: Path = DEFAULT_SPEC
    features: Path = DEFAULT_FEATURES
    excluded: Path = DEFAULT_EXCLUDED
    code: Path = DEFAULT_CODE
    uncited: Path = DEFAULT_UNCITED
    behaviours: Path | None = None
    """The behaviour table; None means the shipped one when the scenarios are the shipped
    ones, and none for another tree."""


def lint(
    paths: LintPaths | None = None,
    *,
    strict_spec: bool | None = None,
    profiles: Mapping[str, ProfileTable] | None = None,
) -> list[Problem]:
    """Every problem found, sorted by file and line; empty means the suite is sound.

    ``strict_spec`` and ``profiles`` (the reference's table by default) are those of
    ``conformance.analysis.spec_lint.check_spec``; ``strict_spec`` is on by default
    for the shipped SPEC.md, whose every section has its evidence, and off for
    another tree, which is checked where it has evidence.
    """
    paths = paths or LintPaths()
    problems: list[Problem] = []
    scenarios = _scenarios(paths.scenarios, problems)

    features, _, found = load_reasons(paths.features, "features.yaml")
    problems += found
    for name, text in features.items():
        if "\n" in text.strip():
            problems.append(
                Problem(str(paths.features), None, name, "the description must be one line")
            )
    for scenario in scenarios:
        for name in scenario.requires:
            if name not in features:
                problems.append(
                    _at(
                        scenario,
                        "requires",
                        f"unknown feature {name!r} (see {paths.features.name})",
                    )
                )

    try:
        spec = Spec.load(paths.spec)
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(str(paths.spec), None, "", f"cannot read: {exc}"))
        return _sorted(problems)
    requirements = spec.requirements
    problems += spec.problems
    in_spec = spec.features()
    if in_spec is not None:
        for name in sorted(in_spec - set(features)):
            message = f"{paths.spec.name} (PROTO-FEATURES-1) names {name!r}: register it"
            problems.append(Problem(str(paths.features), None, name, message))
        for name in sorted(set(features) - in_spec):
            message = f"not a feature of {paths.spec.name} (PROTO-FEATURES-1)"
            problems.append(Problem(str(paths.features), None, name, message))
    problems += check_spec(
        spec,
        reference_profiles() if profiles is None else profiles,
        strict=_is_shipped(paths.spec) if strict_spec is None else strict_spec,
        scenario_ids={s.id for s in scenarios},
    )
    excluded, excluded_lines, found = load_reasons(paths.excluded, "excluded.yaml")
    problems += found

    covered: set[str] = set()
    for scenario in scenarios:
        for spec_id in scenario.spec:
            covered.add(spec_id)
            if spec_id not in requirements:
                problems.append(
                    _at(scenario, "spec", f"{spec_id} is not a requirement of {paths.spec.name}")
                )
    for spec_id, line in excluded_lines.items():
        if spec_id not in requirements:
            problems.append(
                Problem(
                    str(paths.excluded), line, spec_id, f"not a requirement of {paths.spec.name}"
                )
            )
        elif spec_id in covered:
            message = "excluded but covered by a scenario: remove the stale exclusion"
            problems.append(Problem(str(paths.excluded), line, spec_id, message))
    for requirement in requirements.values():
        if requirement.id not in covered and requirement.id not in excluded:
            message = (
                f"({requirement.level}) covered by no scenario and not in {paths.excluded.name}"
            )
            problems.append(Problem(str(paths.spec), requirement.line, requirement.id, message))
    behaviours = paths.behaviours
    if behaviours is None and _same(paths.scenarios, DEFAULT_SCENARIOS):
        behaviours = DEFAULT_BEHAVIOURS
    problems += _behaviours(behaviours, scenarios, requirements)
    problems += _citations(paths, spec)
    return _sorted(problems)


def _behaviours(
    path: Path | None, scenarios: list[Scenario], requirements: Mapping[str, object]
) -> list[Problem]:
    """The behaviour table's data against the scenarios and SPEC.md."""
    if path is None:
        return []
    behaviours, problems = load_behaviours(path)
    cited = {s.id: tuple(s.spec) for s in scenarios}
    return problems + check_behaviours(behaviours, cited, requirements, str(path))


def _citations(paths: LintPaths, spec: Spec) -> list[Problem]:
    """The code <-> SPEC.md rules of the module docstring."""
    requirements = spec.requirements
    vocabulary = Vocabulary.of(requirements, spec.text, paths.spec.name)
    found = scan_tree(paths.code, vocabulary, shown_as=paths.code.parent)
    problems = found.problems
    uncited, uncited_lines, load_problems = load_reasons(paths.uncited, "uncited.yaml")
    problems += load_problems
    for spec_id, line in uncited_lines.items():
        if spec_id not in requirements:
            message = f"not a requirement of {paths.spec.name}"
            problems.append(Problem(str(paths.uncited), line, spec_id, message))
        elif spec_id in found.cited:
            file, cited_on = found.cited[spec_id][0]
            message = f"listed as uncited but cited at {file}:{cited_on}: remove the stale entry"
            problems.append(Problem(str(paths.uncited), line, spec_id, message))
    for requirement in requirements.values():
        if requirement.id not in found.cited and requirement.id not in uncited:
            message = (
                f"({requirement.level}) cited by no comment or docstring in "
                f"{paths.code.name}/ and not in {paths.uncited.name}"
            )
            problems.append(Problem(str(paths.spec), requirement.line, requirement.id, message))
    return problems


def _scenarios(root: Path, problems: list[Problem]) -> list[Scenario]:
    if not root.is_dir():
        problems.append(Problem(str(root), None, "", "the scenarios directory does not exist"))
        return []
    for odd in sorted(root.rglob("*.yml")):
        problems.append(Problem(str(odd), None, "", "scenario files end in .yaml"))
    scenarios, errors = load_scenarios([root], root=root)
    for error in errors:
        problems.extend(error.problems)
    for scenario in scenarios:
        if _SHOULD.search(scenario.title):
            problems.append(_at(scenario, "title", "state the behaviour: no 'should' in titles"))
    return scenarios


def _at(scenario: Scenario, field: str, message: str) -> Problem:
    return Problem(str(scenario.path), None, field, f"{scenario.id}: {message}")


def _sorted(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.file, p.line or 0, p.field))


def _is_shipped(spec: Path) -> bool:
    return _same(spec, DEFAULT_SPEC)


def _same(path: Path, other: Path) -> bool:
    try:
        return path.resolve() == other.resolve()
    except OSError:
        return False
