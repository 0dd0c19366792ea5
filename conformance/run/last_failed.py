"""What the last runs of each implementation failed, for ``toolconf run --last-failed``.

One JSON file (``$TOOLCONF_LAST_FAILED``, default ``last-failed.json`` in
``$TOOLCONF_CACHE`` or ``~/.cache/toolconf``; ``off`` keeps none) maps each
``--impl`` to the ids of the scenarios that did not pass. A run updates its
implementation's entry as pytest's ``--lf`` does: the scenarios it ran are
replaced by their new outcome, the others stay as they were, so rerunning
the failures one by one empties the list. The file is written whole to a
temporary name and renamed, so a run killed while writing leaves the old one;
runs that end at once (shards on one machine) update it in turn, under a lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from conformance.errors import ConformanceError
from conformance.run.file_lock import held
from conformance.run.results import ScenarioResult

__all__ = ["LAST_FAILED_ENV", "last_failed", "last_failed_path", "record_run"]

LAST_FAILED_ENV: Final = "TOOLCONF_LAST_FAILED"
_OFF: Final = frozenset({"0", "off"})
_LOCK_WAIT: Final = 30.0
"""Seconds a run waits for another to finish updating the record before it skips its own."""


def last_failed_path() -> Path | None:
    """The file of last failures, or None when it is turned off."""
    configured = os.environ.get(LAST_FAILED_ENV, "")
    if configured.lower() in _OFF:
        return None
    if configured:
        return Path(configured)
    cache = os.environ.get("TOOLCONF_CACHE")
    return (Path(cache) if cache else Path.home() / ".cache" / "toolconf") / "last-failed.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConformanceError(f"{path}: unreadable record of last failures: {exc}") from exc
    return data if isinstance(data, dict) else {}


def last_failed(impl: str) -> list[str] | None:
    """The ids the runs of ``impl`` left failing, or None when no run of it is recorded.

    Raises:
        ConformanceError: the record is turned off, or exists and is not readable.
    """
    path = last_failed_path()
    if path is None:
        raise ConformanceError(
            f"--last-failed needs the record of last failures, which {LAST_FAILED_ENV} turns off"
        )
    entry = _read(path).get(impl)
    if not isinstance(entry, dict) or not isinstance(entry.get("failed"), list):
        return None
    return [str(i) for i in entry["failed"]]


def record_run(impl: str, results: Iterable[ScenarioResult], *, started: str = "") -> None:
    """Update ``impl``'s entry with a run's results; a record that cannot be written is skipped."""
    path = last_failed_path()
    if path is None:
        return
    results = list(results)
    try:
        with held(path.with_name(f".{path.name}.lock"), timeout=_LOCK_WAIT):
            _update(path, impl, results, started)
    except OSError:  # the lock not had in time (TimeoutError) or not made: skipped
        return


def _update(path: Path, impl: str, results: list[ScenarioResult], started: str) -> None:
    """Read the record, change ``impl``'s entry and write it back (under the lock)."""
    try:
        data = _read(path)
    except ConformanceError:
        data = {}
    before = data.get(impl, {}).get("failed", []) if isinstance(data.get(impl), dict) else []
    ran = {r.id for r in results}
    failed = [i for i in before if isinstance(i, str) and i not in ran]
    failed += [r.id for r in results if r.bad]
    data[impl] = {"failed": sorted(set(failed)), "started": started}
    written: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=".last-failed-", delete=False
        ) as out:
            written = out.name
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(written, path)
    except OSError:
        if written is not None:
            with contextlib.suppress(OSError):
                os.unlink(written)
