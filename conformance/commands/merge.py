"""``toolconf merge REPORT...``: the JSON-lines reports of a run's shards as the whole run's.

Each shard of ``toolconf run --shard K/N`` writes its own report; merged,
they give the report one whole run would have written, in any format
``--report`` names (JSON lines by default): the results in the run's order,
the counts and figures recomputed (``conformance.analysis.merge``). Reports
that are not shards of one run, or a missing shard, are refused with a
message saying which reports and why. The exit status is the merged run's,
as ``toolconf run`` gives it: 1 when a scenario did not pass.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final

from conformance.analysis.merge import MergeError, merge_parts, read_part, run_info
from conformance.analysis.reports import write_report
from conformance.analysis.verdict import verdict_line
from conformance.commands.options import ReportFormats, chosen_reports
from conformance.commands.run import EXIT_FAILED, EXIT_OK, RUN_REPORTS, open_output
from conformance.commands.select import spec_provenances, spec_sections
from conformance.errors import ConformanceError
from reference.version import __version__

__all__ = ["MERGE_REPORTS", "merge_command"]

MERGE_REPORTS: Final = ReportFormats(
    RUN_REPORTS.defaults, always=("jsonl",), notes=RUN_REPORTS.notes
)
"""``toolconf run``'s formats and files; without ``--report``, JSON lines."""


def merge_command(args: argparse.Namespace) -> int:
    """``toolconf merge``; returns the exit status.

    Raises:
        ConformanceError: an unreadable report, reports that are not one run's shards, or a
            report that would overwrite one of them.
    """
    reports = chosen_reports(args)
    given = {path.resolve() for path in args.reports}
    for fmt, path in reports:
        if path != "-" and Path(path).resolve() in given:
            raise ConformanceError(f"--report {fmt}={path} would overwrite a report it merges")
    parts = [read_part(path) for path in args.reports]
    for part in parts:
        made_by = part.header.get("toolconf")
        if made_by != __version__:
            raise MergeError(
                f"{part.name} was written by toolconf {made_by}, and this is toolconf "
                f"{__version__}: merge with the toolconf that ran the shards"
            )
    merged = merge_parts(parts)
    console = sys.stderr if any(path == "-" for _, path in reports) else sys.stdout
    for note in merged.notes:
        print(f"toolconf merge: {note}", file=console)
    info = run_info(merged.header, provenances=spec_provenances(), sections=spec_sections())
    for fmt, path in reports:
        with open_output(path) as out:
            write_report(fmt, merged.results, info, out)
        if path != "-":
            print(f"report ({fmt}): {path}", file=console)
    print(
        f"merged {len(parts)} report{'s' if len(parts) != 1 else ''}: "
        f"{verdict_line(merged.results)}",
        file=console,
    )
    return EXIT_FAILED if any(r.bad for r in merged.results) else EXIT_OK
