"""``toolconf bench``: the reference beside another implementation, in one run, three outputs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import FAKE, fake_command
from PIL import Image

from conformance.cli import main
from conformance.instruments.bench import report
from conformance.instruments.bench.run import bench


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_reference_and_another_implementation_are_measured_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status = main(
        [
            "bench",
            "--rounds",
            "1",
            "--reads",
            "30",
            *("--report", f"json={out / 'bench.json'}", "--report", f"markdown={out / 'bench.md'}"),
            *("--report", f"png={out / 'bench.png'}"),
            "--impl",
            f"fake={FAKE}",
        ]
    )
    printed = capsys.readouterr().out
    assert status == 0, printed
    data = json.loads((out / "bench.json").read_text(encoding="utf-8"))
    labels = [impl["label"] for impl in data["implementations"]]
    assert labels == ["reference", "fake"]
    reference, fake = data["implementations"]
    assert reference["spec"].startswith("stdio:")  # the same transport as any adapter
    assert all(point["hit_seconds"] is not None for point in reference["dedup"])
    assert all(point["hit_seconds"] is None for point in fake["dedup"])  # the fake has no dedup
    assert {p["error_name"] for p in reference["size_cap"]} == {"MaxFileReadSizeExceededError"}
    assert reference["replay_on"]["stubs"] == data["trace"]["rereads_unchanged"]
    assert data["trace"]["reads"] == 30
    markdown = (out / "bench.md").read_text(encoding="utf-8")
    assert markdown in printed
    for heading in ("## Dedup", "## Over-cap refusal", "## The token gate", "## Trace replay"):
        assert heading in markdown
    assert "## Against seed 000's claims" in markdown
    assert "| 256 KiB | fake |" in markdown
    with Image.open(out / "bench.png") as image:
        assert image.format == "PNG"
        assert image.size == (1000, 620)


@pytest.mark.slow
@pytest.mark.subprocess
def test_an_implementation_that_cannot_start_is_reported_and_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    crash = fake_command("crash")
    status = main(
        ["bench", "--no-reference", "--rounds", "1", "--output-dir", str(out), "--impl", crash]
    )
    assert status == 3
    markdown = (out / "bench.md").read_text(encoding="utf-8")
    assert "**impl-1**" in markdown
    assert "could not be measured" in markdown
    assert "AdapterFailure" in markdown or "Crash" in markdown or "crash" in markdown
    capsys.readouterr()


@pytest.mark.parametrize(
    "argv",
    [
        ["--no-reference"],
        ["--rounds", "0"],
        ["--reads", "1"],
        ["--reread-share", "1"],
        ["--after-edit-share", "-0.1"],
    ],
    ids=["nothing-to-measure", "no-rounds", "one-read", "all-rereads", "negative-share"],
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", *argv]) == 2
    assert "bench:" in capsys.readouterr().err


@pytest.mark.slow
def test_the_summary_gives_the_headline_ratios() -> None:
    run = bench([("reference", "direct")], rounds=1, reads=20, say=lambda _line: None)
    headline = report.summary(run)["reference"]
    assert headline["failure"] is None
    assert headline["full_over_hit_100KB"] > 1
    assert headline["size_cap_spread"] > 0
    assert 0 < headline["tokens_saved"] < 1
    png = report.to_png(run)
    assert Image.open(io.BytesIO(png)).size == (1000, 620)


@pytest.mark.slow
def test_the_trace_shares_are_the_ones_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["bench", "--no-reference", "--impl", "direct", "--rounds", "1", "--reads", "40"]
    argv += [
        "--reread-share",
        "0.5",
        "--after-edit-share",
        "0",
        "--report",
        f"json={out}/bench.json",
    ]
    assert main(argv) == 0
    trace = json.loads((out / "bench.json").read_text(encoding="utf-8"))["trace"]
    assert (trace["reads"], trace["rereads"], trace["rereads_after_edit"]) == (40, 20, 0)
    capsys.readouterr()
