"""``toolconf stress``: run the chosen classes, print a summary, write the figures (PROTO-STRESS-1).

``StressConfig.ci()`` is the small fixed-seed run of ``.ci/run``;
``StressConfig.full()`` the full counts (at least 1,000 kills and 10,000
lines). The JSON file holds every figure of every class, with the config
that produced it; the exit status is non-zero when any class found a defect.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

from conformance.instruments.reliability.bypass import run_bypass
from conformance.instruments.reliability.common import DEFAULT_IMPL
from conformance.instruments.reliability.fuzz import run_fuzz
from conformance.instruments.reliability.hostile import run_hostile
from conformance.instruments.reliability.kills import run_kills
from conformance.peers.isolation import isolation_available
from conformance.wire.connector import ConnectorOptions

__all__ = ["CLASSES", "StressConfig", "run_stress"]

CLASSES: Final = ("kills", "fuzz", "hostile", "bypass")
MB: Final = 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class StressConfig:
    """Every knob of a stress run; the defaults are the CI size."""

    impl: str = DEFAULT_IMPL
    classes: tuple[str, ...] = CLASSES
    seed: int = 12
    kills: int = 6
    file_bytes: int = 1 * MB
    lines: int = 300
    line_timeout: float = 5.0
    huge_line_bytes: int = 1 * MB
    big_line_bytes: int = 20 * MB
    slow: float = 2.0
    timeout: float = 5.0
    """Seconds per request outside the fuzzer (a hostile item past it is a hang)."""
    race_rounds: int | None = 30
    cases: Path | None = None
    grep_engines: tuple[str, ...] = ("", "rg", "python")
    isolation: str = "auto"
    pass_env: tuple[str, ...] = ()

    @classmethod
    def full(cls, **given: Any) -> StressConfig:
        """The full counts: every case at its full size."""
        base: dict[str, Any] = {
            "kills": 1000,
            "file_bytes": 4 * MB,
            "lines": 10_000,
            "huge_line_bytes": 20 * MB,
            "big_line_bytes": 100 * MB,
            "race_rounds": None,
            "timeout": 15.0,
            "line_timeout": 15.0,
        }
        return cls(**(base | given))

    def options(self, timeout: float | None = None) -> ConnectorOptions:
        """Connector options for this run."""
        chosen = self.timeout if timeout is None else timeout
        return ConnectorOptions(
            timeout=chosen,
            hello_timeout=max(chosen, 60.0),
            isolation=self.isolation,  # type: ignore[arg-type]
            pass_env=self.pass_env,
        )


@dataclass
class _Class:
    name: str
    ok: bool
    seconds: float
    figures: dict[str, Any]
    failures: list[str] = field(default_factory=list)


def run_stress(config: StressConfig, console: TextIO, json_path: Path | None) -> int:
    """Run the configured classes against ``config.impl``; 0 when none found a defect."""
    started = time.perf_counter()
    runners: dict[str, Callable[[], Any]] = {
        "kills": lambda: run_kills(
            config.impl,
            config.options(max(config.timeout, 120.0)),
            kills=config.kills,
            size=config.file_bytes,
            seed=config.seed,
        ),
        "fuzz": lambda: run_fuzz(
            config.impl,
            config.options(max(config.timeout, 30.0)),
            count=config.lines,
            seed=config.seed,
            line_timeout=config.line_timeout,
            huge=config.huge_line_bytes,
        ),
        "hostile": lambda: run_hostile(
            config.impl,
            config.options(),
            big_line=config.big_line_bytes,
            slow=config.slow,
            engines=config.grep_engines,
        ),
        "bypass": lambda: run_bypass(
            config.impl,
            config.options(max(config.timeout, 30.0)),
            cases_file=config.cases,
            race_rounds=config.race_rounds,
        ),
    }
    isolated = config.isolation == "on" or (config.isolation == "auto" and isolation_available())
    print(
        f"toolconf stress: {config.impl} (seed {config.seed}, "
        f"{'isolated' if isolated else 'NOT isolated'}): {', '.join(config.classes)}",
        file=console,
        flush=True,
    )
    done: list[_Class] = []
    for name in config.classes:
        began = time.perf_counter()
        result = runners[name]()
        figures = dataclasses.asdict(result)
        failures = figures.pop("failures", [])
        entry = _Class(name, bool(result.ok), time.perf_counter() - began, figures, failures)
        done.append(entry)
        for line in _summary(entry):
            print(line, file=console, flush=True)
    total = time.perf_counter() - started
    bad = [c.name for c in done if not c.ok]
    print(
        f"\n{'FAILED' if bad else 'OK'}: {len(bad)} of {len(done)} classes found defects"
        f"{' (' + ', '.join(bad) + ')' if bad else ''}; {total:.1f} s",
        file=console,
    )
    if json_path is not None:
        document = {
            "impl": config.impl,
            "config": _jsonable(dataclasses.asdict(config)),
            "isolated": isolated,
            "host": {"python": platform.python_version(), "system": platform.system()},
            "seconds": round(total, 2),
            "ok": not bad,
            "classes": {
                c.name: {
                    "ok": c.ok,
                    "seconds": round(c.seconds, 2),
                    **c.figures,
                    "failures": c.failures,
                }
                for c in done
            },
        }
        json_path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
        print(f"figures: {json_path}", file=console)
    return 1 if bad else 0


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _summary(entry: _Class) -> list[str]:
    """The console lines of one class: a verdict, its key figures, the first failures."""
    f = entry.figures
    head = f"\n== {entry.name}: {'ok' if entry.ok else 'DEFECTS'} ({entry.seconds:.1f} s)"
    if entry.name == "kills":
        body = [
            f"  {f['kills']} kills ({f['mid_operation']} mid-operation): {f['old']} old, "
            f"{f['new']} new, {f['torn']} torn, {f['missing']} missing, "
            f"{f['mode_lost']} mode lost, {f['link_replaced']} symlinks replaced",
            f"  leftover temporary files: {f['leftover_temp_files']} "
            f"(cleaned by a later start: {f['leftovers_cleaned_by_next_start']}, "
            f"remaining: {f['leftovers_remaining']}); setup failures: {f['setup_failures']}",
        ]
    elif entry.name == "fuzz":
        families = ", ".join(f"{k} {v}" for k, v in sorted(f["failed_families"].items()))
        body = [
            f"  {f['lines']} lines: {f['answered']} answered, {f['crashes']} crashes, "
            f"{f['hangs']} hangs, {f['wrong_seq']} wrong seq, {f['extra_answers']} extra "
            f"answers, {f['bad_answers']} bad answers, {f['internal_answers']} internal "
            f"answers; session works after: "
            f"{'yes' if f['session_works_after'] else 'NO'}",
            f"  failing lines by family: {families or 'none'}",
        ]
    elif entry.name == "hostile":
        body = [
            f"  {len(f['items'])} items: {f['hangs']} hangs, {f['crashes']} crashes, "
            f"{f['slow']} over {f['slow_limit']:g} s; slowest {f['max_seconds']:.2f} s, "
            f"largest answer {f['max_answer_bytes']:,} bytes"
        ]
    else:
        forms = ", ".join(
            f"{k} {v['bypasses']}/{v['attempts']}"
            for k, v in sorted(f["by_form"].items())
            if v["bypasses"]
        )
        body = [
            f"  {f['cases']} cases, {f['attempts']} attempts ({f['source']}): "
            f"{f['bypasses']} bypassed, {f['errors']} errors",
            f"  bypassing forms (bypassed cases/attempts): {forms or 'none'}",
        ]
        body += [f"  - {b['id']}: {'; '.join(b['found'])}"[:200] for b in f["bypassed"][:12]]
    body += [f"  ! {line}"[:220] for line in entry.failures[:8]]
    return [head, *body]


def parse_classes(text: str) -> tuple[str, ...]:
    """``kills,fuzz`` -> the classes, in the canonical order.

    Raises:
        ValueError: an unknown class name.
    """
    chosen = {p.strip() for p in text.split(",") if p.strip()}
    unknown = chosen - set(CLASSES)
    if unknown or not chosen:
        raise ValueError(f"unknown class {', '.join(sorted(unknown)) or '(none)'}; from {CLASSES}")
    return tuple(c for c in CLASSES if c in chosen)


def config_from(args: Any, *, full: bool) -> StressConfig:
    """A ``StressConfig`` of parsed CLI arguments (``None`` keeps the preset's value)."""
    given: dict[str, Any] = {"impl": args.impl, "isolation": args.isolation}
    given["pass_env"] = tuple(args.pass_env)
    mapping = {
        "seed": "seed",
        "kills": "kills",
        "lines": "lines",
        "line_timeout": "line_timeout",
        "slow": "slow",
        "timeout": "timeout",
        "race_rounds": "race_rounds",
        "cases": "cases",
    }
    for attr, key in mapping.items():
        if getattr(args, attr, None) is not None:
            given[key] = getattr(args, attr)
    for attr, key in (("file_mb", "file_bytes"), ("big_line_mb", "big_line_bytes")):
        if getattr(args, attr, None) is not None:
            given[key] = int(getattr(args, attr) * MB)
    if args.only:
        given["classes"] = parse_classes(args.only)
    return StressConfig.full(**given) if full else StressConfig(**given)
