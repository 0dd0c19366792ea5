"""Every option that several commands take, defined once, with one meaning everywhere.

**Selection** (``run``, ``list``; ``--spec`` also in ``mutants``; the pytest
plugin's ``--toolconf-spec``, ``-area``, ``-level``, ``-feature``):
``PATHS``, ``-k PATTERN``, ``--spec ID|PREFIX|GLOB``, ``--area NAME``,
``--level MUST|SHOULD|MAY``, ``--feature NAME``, ``--last-failed``,
``--from-report REPORT``, ``-x`` / ``--maxfail N`` (meanings in
``conformance.suite.selection``), ``--shard K/N`` (``conformance.suite.shard``).
A singular name selects scenarios; the plural ``--levels`` and
``--features`` change how the chosen ones are judged (the deciding
assertion levels; the features assumed instead of hello's).

**Output**: ``--report FORMAT[=PATH]``, repeatable, in every command that
writes a file; a format without a path goes to the command's default file,
``-`` is stdout. The older spellings (``--output``, ``--output-dir``,
``--json``, ``--jsonl``) still work for one release, with a note on stderr.

**Pace** (``run``): ``--jobs N`` judges on N sessions of the implementation
at once, the results and reports those of a serial run
(``conformance.run.parallel``); the pytest plugin leaves that to
pytest-xdist's ``-n N``.

**Files**: ``--spec-file`` is SPEC.md where a command reads it (``lint``,
``fidelity``, ``diff``, ``matrix``); ``--expected-failures FILE`` is always
the implementation's expected failures, YAML ``{scenario-id: reason}``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.peers.registry import known_schemes, scheme_usage
from conformance.suite.checks import LEVELS
from conformance.suite.provenance import PROVENANCES
from conformance.suite.registry import DEFAULT_FEATURES, DEFAULT_SCENARIOS, load_reasons
from conformance.suite.selection import Selection
from conformance.suite.shard import Shard
from conformance.wire.connector import ConnectorOptions

__all__ = [
    "REQUIREMENT_LEVELS",
    "Deprecated",
    "ReportFormats",
    "add_impl",
    "add_jobs",
    "add_report",
    "add_selection",
    "add_spec_file",
    "assertion_levels",
    "chosen_reports",
    "connector_options",
    "deprecated",
    "feature_list",
    "feature_name",
    "impl_help",
    "requirement_level",
    "selection_of",
    "shard",
    "spec_pattern",
]

REQUIREMENT_LEVELS = ("MUST", "SHOULD", "MAY")


# -- deprecated spellings ------------------------------------------------------


class Deprecated(argparse.Action):
    """An old spelling that still works for one release, saying so on stderr.

    With ``append_as=FORMAT`` the value becomes ``(FORMAT, value)`` in
    ``legacy_reports`` (``--json PATH`` is ``--report json=PATH``); otherwise
    it is stored in ``dest`` as the new option would store it.
    """

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        *,
        instead: str,
        append_as: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.instead = instead
        self.append_as = append_as
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(
            f"toolconf: {option_string} is deprecated and goes in the next release; "
            f"use {self.instead}",
            file=sys.stderr,
        )
        if self.append_as is not None:
            legacy = [*getattr(namespace, "legacy_reports", []), (self.append_as, str(values))]
            namespace.legacy_reports = legacy
            return
        setattr(namespace, self.dest, values)


def deprecated(parser: argparse.ArgumentParser, name: str, *, instead: str, **kwargs: Any) -> None:
    """Add an old spelling, hidden from the help, that says ``instead`` when used."""
    parser.add_argument(name, action=Deprecated, instead=instead, help=argparse.SUPPRESS, **kwargs)


# -- output: --report FORMAT[=PATH] ------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReportFormats:
    """The reports a command can write: format -> default file (``-`` is stdout)."""

    defaults: Mapping[str, str]
    always: tuple[str, ...] = ()
    """Formats written when no ``--report`` is given."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """Format -> a few words on what it holds, for the help."""

    def help(self) -> str:
        """The ``--report`` help: each format and its default file."""
        described = ", ".join(
            f"{fmt}{' (' + self.notes[fmt] + ')' if fmt in self.notes else ''} "
            f"[{'stdout' if path == '-' else path}]"
            for fmt, path in self.defaults.items()
        )
        written = f"; without --report: {', '.join(self.always)}" if self.always else ""
        return (
            f"write a report, FORMAT or FORMAT=PATH ('-' is stdout): {described}{written}; "
            "repeatable"
        )


def add_report(
    parser: argparse.ArgumentParser, formats: ReportFormats, *, output_dir: bool = True
) -> None:
    """``--report FORMAT[=PATH]``, with ``--output`` (and, where a command had it,
    ``--output-dir``) as deprecated spellings."""

    def parse(text: str) -> tuple[str, str | None]:
        fmt, sep, path = text.partition("=")
        if fmt not in formats.defaults:
            raise argparse.ArgumentTypeError(
                f"unknown report format {fmt!r}; choose from {', '.join(formats.defaults)}"
            )
        if sep and not path:
            raise argparse.ArgumentTypeError(f"--report {text}: empty path")
        return fmt, path if sep else None

    parser.add_argument(
        "--report",
        dest="outputs",
        action="append",
        default=[],
        type=parse,
        metavar="FORMAT[=PATH]",
        help=formats.help(),
    )
    deprecated(parser, "--output", dest="output", instead="--report FORMAT=PATH", metavar="FILE")
    if output_dir:
        deprecated(
            parser,
            "--output-dir",
            dest="output_dir",
            type=Path,
            instead="--report FORMAT=DIR/FILE",
            metavar="DIR",
        )
    parser.set_defaults(output=None, output_dir=None, legacy_reports=[], report_formats=formats)


def chosen_reports(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Each report to write, as (format, path), from ``add_report``'s arguments.

    Without ``--report``, the command's ``always`` formats are written, but
    for those an old spelling (``--json PATH``) names. A format without a
    path goes to ``--output`` when that old option is given, else to its
    default file (in ``--output-dir`` when given).

    Raises:
        ConformanceError: two reports write the same file, or both to stdout.
    """
    formats: ReportFormats = args.report_formats
    legacy: list[tuple[str, str | None]] = list(getattr(args, "legacy_reports", []))
    named = {fmt for fmt, _ in legacy}
    given: list[tuple[str, str | None]] = list(args.outputs) or [
        (f, None) for f in formats.always if f not in named
    ]
    chosen: list[tuple[str, str]] = []
    for fmt, path in given + legacy:
        chosen.append((fmt, path if path is not None else _default_path(args, formats, fmt)))
    paths = [path for _, path in chosen]
    if len(set(paths)) < len(paths):
        raise ConformanceError("two --report options write the same file")
    return chosen


def _default_path(args: argparse.Namespace, formats: ReportFormats, fmt: str) -> str:
    path: str = getattr(args, "output", None) or formats.defaults[fmt]
    directory = getattr(args, "output_dir", None)
    if directory is not None and path != "-":
        return str(Path(directory) / Path(path).name)
    return path


# -- the implementation ------------------------------------------------------------


def impl_help(default: str | None = "direct") -> str:
    """``--impl``'s help: every registered scheme, as a user writes it."""
    schemes = " | ".join(scheme_usage(scheme) for scheme in known_schemes())
    return f"the implementation: {schemes}" + (f" (default {default})" if default else "")


def add_impl(parser: argparse.ArgumentParser, *, default: str = "direct") -> None:
    """``--impl`` and the connector options: ``--timeout``, ``--isolation``, ``--pass-env``."""
    parser.add_argument("--impl", default=default, metavar="IMPL", help=impl_help(default))
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds per request (default 10)"
    )
    parser.add_argument(
        "--isolation",
        choices=("auto", "on", "off"),
        default="auto",
        help="run adapter processes in namespaces of their own (PROTO-ISOLATE-1): auto (when "
        "the host permits, the default), on (refuse to run without), off",
    )
    parser.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="a variable of this environment the adapter inherits beyond the allowlist "
        "(PROTO-ENV-1); repeatable",
    )


def connector_options(args: argparse.Namespace) -> ConnectorOptions:
    """The connector options of ``add_impl``'s arguments."""
    return ConnectorOptions(
        timeout=args.timeout,
        hello_timeout=max(args.timeout, 30.0),
        isolation=args.isolation,
        pass_env=tuple(args.pass_env),
    )


# -- levels: --level selects, --levels decides --------------------------------------


def assertion_levels(text: str) -> tuple[str, ...]:
    """``--levels``: comma-separated assertion levels (behaviour, identity, rendering)."""
    chosen = tuple(dict.fromkeys(p.strip().lower() for p in text.split(",") if p.strip()))
    unknown = [level for level in chosen if level not in LEVELS]
    if unknown or not chosen:
        hint = ""
        if any(level.upper() in REQUIREMENT_LEVELS for level in unknown):
            hint = "; MUST, SHOULD and MAY are requirement levels, selected with --level"
        raise argparse.ArgumentTypeError(
            f"unknown assertion level {', '.join(unknown) or '(none)'}; "
            f"choose from {', '.join(LEVELS)}{hint}"
        )
    return chosen


def requirement_level(text: str) -> str:
    """``--level``: one requirement level (MUST, SHOULD, MAY), any case."""
    level = text.strip().upper()
    if level not in REQUIREMENT_LEVELS:
        hint = ""
        if text.strip().lower() in LEVELS:
            hint = f"; {text.strip()} is an assertion level, which decides with --levels"
        raise argparse.ArgumentTypeError(
            f"unknown requirement level {text!r}; choose from {', '.join(REQUIREMENT_LEVELS)}{hint}"
        )
    return level


# -- selection ----------------------------------------------------------------------


def spec_pattern(text: str) -> str:
    """``--spec``: an ID, a prefix or a glob; a path to a file is the wrong option."""
    if "/" in text or text.endswith(".md"):
        raise argparse.ArgumentTypeError(
            f"{text!r} looks like a file: --spec selects by SPEC ID (ID, prefix or glob); "
            "SPEC.md itself is --spec-file"
        )
    if not text.strip():
        raise argparse.ArgumentTypeError("--spec needs an ID, a prefix or a glob")
    return text.strip()


def known_features(path: Path = DEFAULT_FEATURES) -> dict[str, str]:
    """The feature registry: name -> what it covers."""
    entries, _, _ = load_reasons(path, "features")
    return entries


def feature_name(text: str) -> str:
    """``--feature``: a name of the feature registry."""
    features = known_features()
    if features and text not in features:
        raise argparse.ArgumentTypeError(
            f"unknown feature {text!r}; choose from {', '.join(sorted(features))}"
        )
    return text


def add_selection(parser: argparse.ArgumentParser, *, run: bool = False) -> None:
    """The selection options; ``run`` adds those that only a run has (``--last-failed``,
    ``-x``, ``--maxfail``)."""
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help=f"scenario files or directories (default the shipped suite, {DEFAULT_SCENARIOS})",
    )
    parser.add_argument(
        "-k",
        "--id",
        dest="patterns",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only ids containing PATTERN, or matching it as a glob; repeatable",
    )
    parser.add_argument(
        "--spec",
        dest="spec_ids",
        action="append",
        default=[],
        type=spec_pattern,
        metavar="ID",
        help="only scenarios citing a SPEC ID: the ID, a prefix ending at a dash "
        "('READ-DEDUP'), or a glob ('PERM-*-2'); repeatable",
    )
    parser.add_argument(
        "--area",
        dest="areas",
        action="append",
        default=[],
        metavar="NAME",
        help="only scenarios of this area (its directory: read, edit, permissions...); repeatable",
    )
    parser.add_argument(
        "--level",
        dest="requirement_levels",
        action="append",
        default=[],
        type=requirement_level,
        metavar="MUST|SHOULD|MAY",
        help="only scenarios of this requirement level; repeatable (the assertion levels "
        "that decide are --levels)",
    )
    parser.add_argument(
        "--feature",
        dest="feature_choice",
        action="append",
        default=[],
        type=feature_name,
        metavar="NAME",
        help="only scenarios requiring this feature (conformance/features.yaml); repeatable",
    )
    parser.add_argument(
        "--provenance",
        dest="provenances",
        action="append",
        default=[],
        choices=PROVENANCES,
        help="only scenarios whose SPEC IDs all have this provenance or another given one "
        "(PROTO-PROVENANCE-1; --provenance documented judges the documented contract alone); "
        "repeatable",
    )
    parser.add_argument(
        "--from-report",
        type=Path,
        metavar="REPORT",
        help="only the scenarios that did not pass in this JSON-lines report",
    )
    if not run:
        return
    parser.add_argument(
        "--last-failed",
        "--lf",
        action="store_true",
        help="only the scenarios the last runs of this --impl did not pass",
    )
    parser.add_argument(
        "-x",
        "--exitfirst",
        dest="maxfail",
        action="store_const",
        const=1,
        help="stop after the first scenario that does not pass",
    )
    parser.add_argument(
        "--maxfail",
        type=_positive,
        metavar="N",
        help="stop after N scenarios that do not pass",
    )
    parser.add_argument(
        "--shard",
        type=shard,
        metavar="K/N",
        help="judge shard K of N of the chosen scenarios (sorted by id, every Nth from the "
        "Kth), for one run spread over N machines or CI jobs; toolconf merge joins their "
        "JSON-lines reports into the whole run's",
    )


def shard(text: str) -> Shard:
    """``--shard K/N``."""
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


# -- pace -----------------------------------------------------------------------------


def add_jobs(parser: argparse.ArgumentParser) -> None:
    """``--jobs N``: sessions of the implementation judging at once."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=jobs,
        default=1,
        metavar="N",
        help="judge on N sessions of the implementation at once, each started once and "
        "restarted after a failure, one queue of scenarios between them; results and "
        "reports are a serial run's (auto: one per core; default 1)",
    )


def jobs(text: str) -> int:
    """``--jobs``: a whole number of at least 1, or ``auto`` (one per core)."""
    if text.strip().lower() == "auto":
        cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else ()
        return max(1, len(cores) or os.cpu_count() or 1)
    return _positive(text)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def add_spec_file(parser: argparse.ArgumentParser, default: Path) -> None:
    """``--spec-file`` (SPEC.md), with ``--spec FILE`` as its deprecated spelling."""
    parser.add_argument(
        "--spec-file", type=Path, default=default, metavar="FILE", help="SPEC.md (default shipped)"
    )
    deprecated(parser, "--spec", dest="spec_file", type=Path, instead="--spec-file FILE")


def feature_list(text: str) -> frozenset[str]:
    """``--features``: comma-separated features assumed instead of hello's."""
    return frozenset(f.strip() for f in text.split(",") if f.strip())


def selection_of(args: argparse.Namespace, ids: frozenset[str] | None = None) -> Selection:
    """The ``Selection`` of ``add_selection``'s arguments; ``ids`` narrows it to those ids."""
    return Selection(
        patterns=tuple(args.patterns),
        spec=tuple(args.spec_ids),
        areas=tuple(args.areas),
        levels=tuple(args.requirement_levels),
        features=tuple(args.feature_choice),
        ids=ids,
    )
