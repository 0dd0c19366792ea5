"""The worker pool: every job starts at once on a thread of its own, and threads are reused."""

from __future__ import annotations

import threading

import pytest

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
