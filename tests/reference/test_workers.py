"""The worker pool: every job starts at once on a thread of its own, and threads are reused."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from reference import scheduler
from reference.engine import Engine
from reference.workers import Workers

WAIT = 10.0  # seconds; a bound on a hang, never reached when the pool is right


def _wait_idle(pool: Workers, count: int) -> None:
    """The worker counts itself idle just after its job returns: wait for that."""
    for _ in range(10_000):
        if pool.idle == count:
            return
        threading.Event().wait(0.001)
    raise AssertionError(f"never {count} idle workers")


def test_jobs_that_wait_for_each_other_all_run_at_once() -> None:
    """SPEC: SCHED-RUN-1"""
    # Calls that may overlap must: no job waits behind a running one.
    pool = Workers("test")
    barrier = threading.Barrier(5, timeout=WAIT)
    done = threading.Semaphore(0)

    def job() -> None:
        barrier.wait()  # raises BrokenBarrierError unless all five run together
        done.release()

    for _ in range(5):
        pool.run(job)
    for _ in range(5):
        assert done.acquire(timeout=WAIT)
    assert pool.size == 5


def test_a_worker_is_reused_once_its_job_ended() -> None:
    """Reference-defined: workers are kept between calls, not started per call."""
    pool = Workers("test")
    names: list[str] = []
    for _ in range(20):
        finished = threading.Event()

        def job(finished: threading.Event = finished) -> None:
            names.append(threading.current_thread().name)
            finished.set()

        pool.run(job)
        assert finished.wait(WAIT)
        _wait_idle(pool, 1)
    assert pool.size == 1
    assert all(name.startswith("test-") for name in names)


def test_a_failing_job_costs_no_worker(capsys: pytest.CaptureFixture[str]) -> None:
    """Reference-defined: a job that raises is reported on stderr; its worker serves on."""
    pool = Workers("test")
    ran = threading.Event()

    def boom() -> None:
        raise RuntimeError("job failed")

    pool.run(boom)
    _wait_idle(pool, 1)
    assert "RuntimeError: job failed" in capsys.readouterr().err
    pool.run(ran.set)
    assert ran.wait(WAIT)
    assert pool.size == 1  # the same worker took the next job


def test_workers_are_daemon_threads() -> None:
    """Reference-defined: a call that never ends cannot keep the process from exiting."""
    pool = Workers("test")
    seen: list[bool] = []
    finished = threading.Event()

    def job() -> None:
        seen.append(threading.current_thread().daemon)
        finished.set()

    pool.run(job)
    assert finished.wait(WAIT)
    assert seen == [True]


def test_a_fault_on_a_worker_answers_the_message_internal_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: SCHED-FAULT-1, PROTO-INTERNAL-1"""
    real = scheduler.dispatch

    def failing(tools: Any, block: Any, ctx: Any, lookup: Any) -> Any:
        if block["id"] == "bad":
            raise OSError(36, "File name too long")
        return real(tools, block, ctx, lookup)

    monkeypatch.setattr(scheduler, "dispatch", failing)
    (tmp_path / "a.txt").write_text("a\n")
    engine = Engine()
    begin = {"root": str(tmp_path), "prompt": "allow"}
    assert engine.handle({"seq": 1, "cmd": "begin", "session": begin}) == {"seq": 1, "ok": True}
    read = {"name": "Read", "input": {"file_path": str(tmp_path / "a.txt")}}
    content = [{"id": "ok1", **read}, {"id": "bad", **read}, {"id": "ok2", **read}]
    answers: list[dict[str, Any]] = []
    thread = threading.Thread(
        target=lambda: answers.append(
            engine.handle({"seq": 2, "cmd": "message", "content": content})
        ),
        daemon=True,
    )
    thread.start()
    thread.join(30)  # only to detect a hang
    assert answers, "the message never answered"
    assert answers[0]["seq"] == 2
    assert answers[0]["error"]["kind"] == "internal"
    assert "File name too long" in answers[0]["error"]["message"]
    again = engine.handle({"seq": 3, "cmd": "message", "content": [{"id": "r", **read}]})
    assert again["results"][0]["outcome"]["stage"] == "done"  # the engine goes on serving
