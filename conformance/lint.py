"""``python -m conformance lint``: the suite checks itself.

- every scenario file loads (schema, id equal to the file stem), ids are unique,
  and titles do not say "should" (a scenario states a behaviour);
- every ``requires`` names a feature of ``features.yaml`` (one line each), and
  ``features.yaml`` lists exactly the features of SPEC.md's PROTO-FEATURES-1
  table when SPEC.md has one;
- every SPEC ID a scenario cites exists in SPEC.md;
- every SPEC.md requirement is covered by a scenario or excluded, with a
  reason, in ``excluded.yaml``; an excluded ID must exist and must not also be
  covered (a stale exclusion hides nothing and misleads).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from conformance.errors import Problem
from conformance.registry import (
    DEFAULT_EXCLUDED,
    DEFAULT_FEATURES,
    DEFAULT_SCENARIOS,
    DEFAULT_SPEC,
    load_reasons,
    parse_spec,
    spec_features,
)
from conformance.scenario import Scenario, load_scenarios

__all__ = ["LintPaths", "lint"]

_SHOULD = re.compile(r"\bshould\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class LintPaths:
    """The files lint reads; the defaults are the package's own."""

    scenarios: Path = DEFAULT_SCENARIOS
    spec: Path = DEFAULT_SPEC
    features: Path = DEFAULT_FEATURES
    excluded: Path = DEFAULT_EXCLUDED


def lint(paths: LintPaths | None = None) -> list[Problem]:
    """Every problem found, sorted by file and line; empty means the suite is sound."""
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
        spec_text = paths.spec.read_text("utf-8")
    except OSError as exc:
        problems.append(Problem(str(paths.spec), None, "", f"cannot read: {exc}"))
        return _sorted(problems)
    requirements, found = parse_spec(spec_text, str(paths.spec))
    problems += found
    in_spec = spec_features(spec_text)
    if in_spec is not None:
        for name in sorted(in_spec - set(features)):
            message = f"{paths.spec.name} (PROTO-FEATURES-1) names {name!r}: register it"
            problems.append(Problem(str(paths.features), None, name, message))
        for name in sorted(set(features) - in_spec):
            message = f"not a feature of {paths.spec.name} (PROTO-FEATURES-1)"
            problems.append(Problem(str(paths.features), None, name, message))
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
    return _sorted(problems)


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
