"""Runs at once on one machine (``--jobs``, shards, pytest-xdist workers) share files safely:
the scenario cache, an npm install, the record of last failures."""

from __future__ import annotations

import os
import re
import textwrap
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA

from conformance.peers import npm
from conformance.run.file_lock import held
from conformance.run.last_failed import last_failed, record_run
from conformance.run.results import Outcome, ScenarioResult
from conformance.suite.scenario import CACHE_ENV, load_scenario


def at_once(count: int, job: Callable[[int], Any]) -> list[Any]:
    """``job(0..count-1)``, all started together, their answers in order."""
    start = threading.Barrier(count, timeout=10)

    def together(number: int) -> Any:
        start.wait()
        return job(number)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(together, range(count)))


def test_the_lock_lets_one_holder_in_at_a_time_and_bounds_the_wait(tmp_path: Path) -> None:
    lock = tmp_path / "dir" / "x.lock"
    inside: list[int] = []
    most = [0]

    def hold(number: int) -> None:
        with held(lock, timeout=10):
            inside.append(number)
            most[0] = max(most[0], len(inside))
            time.sleep(0.02)
            inside.remove(number)

    at_once(6, hold)
    assert most[0] == 1
    with held(lock, timeout=1):
        began = time.monotonic()
        waited = re.escape("stayed locked by another run for over 0.2 s")
        with pytest.raises(TimeoutError, match=waited), held(lock, timeout=0.2):
            pass
        assert time.monotonic() - began < 2


def test_scenario_cache_writers_at_once_leave_whole_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    path = DATA / "suite" / "basic" / "call-ok.yaml"
    loaded = at_once(8, lambda _: load_scenario(path))
    assert {s.id for s in loaded} == {"call-ok"}
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert [p.suffix for p in files] == [".pickle"]
    assert load_scenario(path) == loaded[0]  # read back from the cache


def test_last_failed_records_of_runs_ending_at_once_all_survive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLCONF_LAST_FAILED", str(tmp_path / "record.json"))

    def record(number: int) -> None:
        failed = ScenarioResult(id=f"s{number}", outcome=Outcome.FAIL)
        record_run(f"impl-{number}", [failed])

    at_once(8, record)
    assert [last_failed(f"impl-{n}") for n in range(8)] == [[f"s{n}"] for n in range(8)]


@pytest.mark.subprocess  # a stand-in npm, a shell script
def test_an_npm_peer_installed_by_several_runs_at_once_is_installed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run installs; the others wait, then find it whole (npm writes the package's
    package.json long before it is done)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "installs.log"
    bin_dir.mkdir()
    (bin_dir / "node").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "npm").write_text(
        textwrap.dedent(
            f"""\
            #!/bin/sh
            echo install >> {log}
            mkdir -p node_modules/fake-peer
            echo '{{"name": "fake-peer"}}' > node_modules/fake-peer/package.json
            sleep 0.5
            touch node_modules/fake-peer/done
            """
        )
    )
    for name in ("node", "npm"):
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TOOLCONF_CACHE", str(tmp_path / "cache"))

    def install(_: int) -> bool:
        installed = npm.ensure_package("fake-peer", "1.0.0")
        return (installed / "done").exists()

    assert at_once(4, install) == [True] * 4
    assert log.read_text().splitlines() == ["install"]
