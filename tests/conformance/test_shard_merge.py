"""``toolconf run --shard K/N`` and ``toolconf merge``: shards that make up the whole run."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, FAKE, fake_command

from conformance.analysis.merge import MergeError, Part, merge_parts, parse_part
from conformance.cli import main
from conformance.run.results import ScenarioResult
from conformance.suite.shard import Shard


def records(path: Path) -> list[dict[str, Any]]:
    """A JSON-lines report's lines without what differs from run to run (the times)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line.pop("duration", None)
        line.pop("started", None)
    return lines


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """The example scenarios, plus one file that does not load."""
    root = tmp_path / "suite"
    shutil.copytree(DATA / "suite", root)
    (root / "extra" / "broken.yaml").write_text("id: broken\nsteps: [\n")
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(["run", *args, "--no-progress"])
    return status, capsys.readouterr().out


def shards(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, count: int, *args: str
) -> list[Path]:
    """Run each shard of ``count`` with ``args``; the reports of those that ran."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    written = []
    for index in range(1, count + 1):
        report = tmp_path / f"shard-{index}-of-{count}.jsonl"
        run(capsys, *args, "--shard", f"{index}/{count}", "--report", f"jsonl={report}")
        if report.exists():
            written.append(report)
    return written


def merge(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    status = main(["merge", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


# -- shares ----------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 3, 7, 40])
def test_shards_share_out_every_scenario_once_whatever_the_order(count: int) -> None:
    ids = [f"s-{n % 23:02d}" for n in range(31)]  # duplicates among them
    shuffled = random.Random(count).sample(ids, len(ids))
    taken: list[str] = []
    sizes = []
    for index in range(1, count + 1):
        shard = Shard(index, count)
        share = shard.share(ids)
        assert share == [ids[i] for i in shard.positions(ids)]
        assert sorted(share) == sorted(shard.share(shuffled))
        taken += share
        sizes.append(len(share))
    assert sorted(taken) == sorted(ids)
    assert max(sizes) - min(sizes) <= 1


def test_a_shard_takes_every_nth_sorted_id_from_the_kth() -> None:
    ids = ["d", "a", "e", "c", "b"]
    assert Shard(1, 2).share(ids) == ["a", "e", "c"]
    assert Shard(2, 2).share(ids) == ["d", "b"]
    assert Shard.parse(" 2 / 5 ") == Shard(2, 5)
    assert str(Shard(2, 5)) == "2/5"


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "2", "-1/3", "1/3/4"])
def test_a_shard_that_is_not_k_of_n_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], text: str
) -> None:
    with pytest.raises(ValueError, match="K/N"):
        Shard.parse(text)
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--shard", text])
    assert stopped.value.code == 2
    assert "--shard" in capsys.readouterr().err


# -- merged, the whole run ---------------------------------------------------------------


def test_three_shards_merged_are_the_whole_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    whole = tmp_path / "whole.jsonl"
    status, _ = run(capsys, str(suite), "--impl", FAKE, "--report", f"jsonl={whole}")
    assert status == 1
    parts = shards(capsys, tmp_path, 3, str(suite), "--impl", FAKE)
    assert len(parts) == 3
    header = json.loads(parts[0].read_text().splitlines()[0])
    assert header["shard"] == {
        "index": 1,
        "count": 3,
        "order": ["broken", "call-ok", "content-mismatch", "message-ok", "needs-bash"],
    }
    merged = tmp_path / "merged.jsonl"
    status, out, _ = merge(capsys, *reversed(parts), "--report", f"jsonl={merged}")
    assert status == 1  # the run failed: one scenario fails, one file does not load
    assert records(merged) == records(whole)
    assert out.endswith(
        "merged 3 reports: FAILED: 2 of 5 scenarios did not pass (1 fail, 1 error); 2 passed, "
        "1 not applicable.\n"
    )
    started = [json.loads(p.read_text().splitlines()[0])["started"] for p in parts]
    assert json.loads(merged.read_text().splitlines()[0])["started"] == min(started)


def test_a_merge_writes_every_report_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    parts = shards(capsys, tmp_path, 2, str(suite), "--impl", FAKE)
    outputs = {"markdown": "m.md", "junit": "m.xml", "html": "m.html"}
    chosen = [f"--report={fmt}={tmp_path / name}" for fmt, name in outputs.items()]
    status, out, _ = merge(capsys, *parts, *chosen)
    assert status == 1
    for fmt, name in outputs.items():
        assert f"report ({fmt}): {tmp_path / name}" in out
    markdown = (tmp_path / "m.md").read_text()
    assert "**FAILED**: 3 of 5 scenarios passing" in markdown
    assert "content: &#x27;hello&#x27; not found in &#x27;ok: Read&#x27;" in markdown
    assert 'name="content-mismatch"' in (tmp_path / "m.xml").read_text()


@pytest.mark.slow
@pytest.mark.subprocess  # the scheduler's scenarios run Bash
def test_the_reference_in_three_shards_merged_is_its_whole_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chosen = ("--area", "read", "--area", "edit", "--area", "state", "--area", "scheduler")
    whole = tmp_path / "whole.jsonl"
    assert run(capsys, *chosen, "--report", f"jsonl={whole}")[0] == 0
    parts = shards(capsys, tmp_path, 3, *chosen)
    merged = tmp_path / "merged.jsonl"
    assert merge(capsys, *parts, "--report", f"jsonl={merged}")[0] == 0
    assert len(records(whole)) > 200
    assert records(merged) == records(whole)


def test_a_shard_stopped_early_is_said_and_not_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    parts = shards(capsys, tmp_path, 2, str(suite), "--impl", FAKE, "-x")
    status, out, _ = merge(capsys, *parts, "--report", f"jsonl={tmp_path / 'm.jsonl'}")
    assert status == 1
    note = "1 of the 5 scenarios chosen are in no report (shard 1/2 stopped early)"
    assert f"toolconf merge: {note}" in out


def test_an_empty_shard_runs_nothing_and_need_not_be_merged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(DATA / "suite" / "basic", suite)
    status, out = run(capsys, str(suite), "--impl", FAKE, "--shard", "3/3")
    assert status == 0
    assert "shard 3/3 holds none of the 2 scenarios chosen: nothing to judge" in out
    parts = shards(capsys, tmp_path, 3, str(suite), "--impl", FAKE)
    assert len(parts) == 2
    assert merge(capsys, *parts, "--report", f"jsonl={tmp_path / 'm.jsonl'}")[0] == 1
    assert len(records(tmp_path / "m.jsonl")) == 4


def test_whole_runs_of_different_scenarios_are_put_one_after_the_other(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    basic, extra = tmp_path / "basic.jsonl", tmp_path / "extra.jsonl"
    run(capsys, str(DATA / "suite" / "basic"), "--impl", FAKE, "--report", f"jsonl={basic}")
    run(capsys, str(DATA / "suite" / "extra"), "--impl", FAKE, "--report", f"jsonl={extra}")
    merged = tmp_path / "m.jsonl"
    assert merge(capsys, extra, basic, "--report", f"jsonl={merged}")[0] == 1
    ids = [r["id"] for r in records(merged)[1:-1]]
    assert ids == ["message-ok", "needs-bash", "call-ok", "content-mismatch"]
    assert records(merged)[-1]["counts"]["pass"] == 2
    status, _, err = merge(capsys, basic, basic, "--report", f"jsonl={merged}")
    assert status == 2
    assert f"call-ok is in {basic} and {basic}: the reports overlap" in err


# -- refusals ------------------------------------------------------------------------------


def refusal(capsys: pytest.CaptureFixture[str], tmp_path: Path, *reports: Path) -> str:
    status, _, err = merge(capsys, *reports, "--report", f"jsonl={tmp_path / 'm.jsonl'}")
    assert status == 2, err
    assert not (tmp_path / "m.jsonl").exists()
    return err


def test_shards_given_twice_or_missing_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    one, two, three = shards(capsys, tmp_path, 3, str(suite), "--impl", FAKE)
    assert f"{one} and {one} are both shard 1/3: the shards overlap" in refusal(
        capsys, tmp_path, one, two, three, one
    )
    assert "missing shard: 2/3 (2 scenarios)" in refusal(capsys, tmp_path, one, three)


@pytest.mark.subprocess
def test_parts_of_different_runs_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    (one,) = shards(capsys, tmp_path / "a", 1, str(suite), "--impl", FAKE)
    other = tmp_path / "other"
    (two, _) = shards(capsys, other, 2, str(suite), "--impl", fake_command("ok"))
    err = refusal(capsys, tmp_path, one, two)
    assert f"{one} and {two} are not parts of one run: they differ in the implementation" in err
    (three, _) = shards(
        capsys, tmp_path / "b", 2, str(suite), "--impl", FAKE, "--profile", "claude-code-latest"
    )
    assert "they differ in the profile judged (--profile)" in refusal(capsys, tmp_path, one, three)
    (four, _) = shards(capsys, tmp_path / "c", 2, str(suite), "--impl", FAKE, "-k", "ok")
    assert "parts of runs that chose different scenarios" in refusal(capsys, tmp_path, one, four)
    whole = tmp_path / "whole.jsonl"
    run(capsys, str(suite), "--impl", FAKE, "--report", f"jsonl={whole}")
    assert f"{whole} is a whole run" in refusal(capsys, tmp_path, one, whole)


def test_a_report_that_is_not_its_shards_share_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    one, _ = shards(capsys, tmp_path, 2, str(suite), "--impl", FAKE)
    lines = one.read_text().splitlines()
    header = json.loads(lines[0])
    header["shard"]["index"] = 2
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert "outside shard 2/2's share: not a shard of this run" in refusal(
        capsys, tmp_path, forged, one
    )


def test_reports_of_another_toolconf_unreadable_or_overwritten_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    one, two = shards(capsys, tmp_path, 2, str(suite), "--impl", FAKE)
    lines = one.read_text().splitlines()
    header = json.loads(lines[0])
    header["toolconf"] = "0.0.1"
    older = tmp_path / "older.jsonl"
    older.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert "was written by toolconf 0.0.1" in refusal(capsys, tmp_path, older, two)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("{not json\n")
    assert f"{garbage}, line 1: not JSON" in refusal(capsys, tmp_path, garbage, two)
    headless = tmp_path / "headless.jsonl"
    headless.write_text("\n".join(lines[1:]) + "\n")
    assert "no header line" in refusal(capsys, tmp_path, headless, two)
    assert "no such report" in refusal(capsys, tmp_path, tmp_path / "absent.jsonl")
    before = one.read_bytes()
    status, _, err = merge(capsys, one, two, "--report", f"jsonl={one}")
    assert status == 2
    assert "would overwrite a report it merges" in err
    assert one.read_bytes() == before


def test_merging_nothing_is_refused() -> None:
    with pytest.raises(MergeError, match="no reports"):
        merge_parts([])


def test_workers_parts_need_not_all_be_there() -> None:
    header = {"type": "header", "impl": "x", "shard": {"order": ["a", "b", "c"]}}
    part = Part("worker gw1", header, [{"type": "result", "id": "b", "outcome": "pass"}])
    merged = merge_parts([part], every_shard=False)
    assert [r.id for r in merged.results] == ["b"]
    assert merged.notes == ["2 of the 3 scenarios chosen are in no report (a part stopped early)"]
    assert "shard" not in merged.header
    with pytest.raises(MergeError, match="which the run did not choose"):
        merge_parts([Part("w", header, [{"type": "result", "id": "z", "outcome": "pass"}])])
    with pytest.raises(MergeError, match="line 1: a result without an id"):
        parse_part("w", '{"type": "result"}\n')


# -- a report read back is the report ------------------------------------------------------


@pytest.mark.subprocess
def test_a_result_read_back_from_a_report_writes_the_same_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suite: Path
) -> None:
    report = tmp_path / "r.jsonl"
    run(capsys, str(suite), "--impl", fake_command("noisy_stderr"), "--report", f"jsonl={report}")
    written = [json.loads(line) for line in report.read_text().splitlines()[1:-1]]
    assert any(r["mismatches"] for r in written)
    assert any(r["stderr"] for r in written)
    for record in written:
        assert {"type": "result", **ScenarioResult.from_json(record).to_json()} == record
