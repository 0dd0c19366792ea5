"""The ``toolconf`` command line: selections, reports, baselines, exit codes."""

from __future__ import annotations

import io
import json
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import DATA, FAKE, fake_command

from conformance.analysis.console import Progress
from conformance.cli import main
from conformance.run.results import Outcome, ScenarioResult

SUITE = str(DATA / "suite")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(["run", SUITE, "--impl", FAKE, *args])
    return status, capsys.readouterr().out


def test_a_failing_scenario_fails_the_run_and_is_explained(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out = run(capsys)
    assert status == 1
    assert "FAIL content-mismatch" in out
    assert "at step 1 (call Read, line 7):" in out
    assert "content: 'hello' not found in 'ok: Read'" in out
    assert "pass            basic/call-ok" in out  # plain progress lines when not a terminal
    assert out.rstrip().endswith(
        "FAILED: 1 of 4 scenarios did not pass (1 fail); 2 passed, 1 not applicable."
    )
    level_table = out.split("\nlevel ")[1]
    assert "SHOULD" in level_table


def test_selection_by_substring_or_glob(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "-k", "call-ok")[0] == 0
    status, out = run(capsys, "-k", "*-ok", "--no-progress")
    assert (status, "2 scenarios" in out, "basic/call-ok" in out) == (0, True, False)
    assert run(capsys, "-k", "nothing-matches")[0] == 5


def test_expected_failures_turn_failures_into_xfail_and_stale_ones_fail(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    xfail = tmp_path / "xfail.yaml"
    xfail.write_text("content-mismatch: the fake never reads files\n")
    status, out = run(capsys, "--expected-failures", str(xfail))
    assert status == 0
    assert "XFAIL content-mismatch" in out
    xfail.write_text("content-mismatch: known\ncall-ok: believed broken\n")
    status, out = run(capsys, "--expected-failures", str(xfail))
    assert (status, "XPASS call-ok" in out) == (1, True)
    xfail.write_text("content-mismatch: known\nrenamed-long-ago: gone\n")
    status, out = run(capsys, "--expected-failures", str(xfail))
    assert status == 1
    assert "stale expected failures (no such scenario): renamed-long-ago" in out


def test_reports_in_every_format(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    junit = tmp_path / "r.xml"
    assert run(capsys, "--report", f"junit={junit}")[0] == 1
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["content-mismatch"].find("failure") is not None
    assert cases["needs-bash"].find("skipped") is not None
    assert cases["call-ok"].get("classname") == "toolconf.basic"

    jsonl = tmp_path / "r.jsonl"
    run(capsys, "--report", f"jsonl={jsonl}")
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [line["type"] for line in lines] == [
        "header",
        "result",
        "result",
        "result",
        "result",
        "footer",
    ]
    assert lines[0]["implementation"]["name"] == "fake"
    failed = next(line for line in lines if line.get("id") == "content-mismatch")
    assert (failed["outcome"], failed["step"], failed["mismatches"][0]["path"]) == (
        "fail",
        1,
        "content",
    )
    assert lines[-1]["counts"]["pass"] == 2

    markdown = tmp_path / "r.md"
    run(capsys, "--report", f"markdown={markdown}")
    assert "| level | pass | fail | n/a | total |" in markdown.read_text()

    page = tmp_path / "r.html"
    run(capsys, "--report", f"html={page}")
    assert '<span class="o o-fail">fail</span> <code class="sid">content-mismatch</code>' in (
        page.read_text()
    )


def test_a_report_on_stdout_moves_the_console_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", SUITE, "--impl", FAKE, "--report", "jsonl=-"])
    captured = capsys.readouterr()
    assert all(json.loads(line) for line in captured.out.splitlines())
    assert "FAILED" in captured.err


def test_a_baseline_is_recorded_then_compared_then_updated(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baseline = tmp_path / "baseline.json"
    status, out = run(capsys, "--baseline", str(baseline))
    assert (status, "baseline recorded" in out) == (1, True)
    recorded = json.loads(baseline.read_text())["outcomes"]
    assert recorded == {
        "call-ok": "pass",
        "content-mismatch": "fail",
        "message-ok": "pass",
        "needs-bash": "not_applicable",
    }

    data = json.loads(baseline.read_text())
    data["outcomes"]["call-ok"] = "fail"
    baseline.write_text(json.dumps(data))
    _, out = run(capsys, "--baseline", str(baseline))
    assert "1 changed" in out
    assert "call-ok: fail -> pass  [FAKE-CALL-1]" in out
    assert "SPEC IDs affected: FAKE-CALL-1" in out
    assert json.loads(baseline.read_text())["outcomes"]["call-ok"] == "fail"

    _, out = run(capsys, "--baseline", str(baseline), "--update-baseline")
    assert "baseline updated" in out
    assert json.loads(baseline.read_text())["outcomes"]["call-ok"] == "pass"
    _, out = run(capsys, "--baseline", str(baseline))
    assert "no changes" in out


def test_a_scenario_file_that_does_not_load_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "bad.yaml").write_text("id: bad\n")
    status = main(["run", str(tmp_path), "--impl", FAKE])
    out = capsys.readouterr().out
    assert status == 1
    assert "ERROR bad" in out
    assert "bad.yaml:1: missing field 'title'" in out


@pytest.mark.subprocess
def test_an_implementation_that_cannot_start_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", SUITE, "--impl", fake_command("bad_protocol")]) == 3
    assert "protocol 2" in capsys.readouterr().err
    assert main(["run", SUITE, "--impl", "stdio:/nonexistent/adapter"]) == 3


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["run", SUITE, "--impl", "nope:x"]) == 2
    assert main(["run", str(tmp_path / "missing")]) == 2
    with pytest.raises(SystemExit) as info:
        main(["run", "--report", "pdf"])
    assert info.value.code == 2
    capsys.readouterr()


def test_list_prints_ids_levels_spec_ids_and_titles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", SUITE]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        "basic/call-ok\tMUST\tFAKE-CALL-1\tA call to the fake succeeds with its canned text"
        in lines
    )
    assert len(lines) == 4
    main(["list", SUITE, "--level", "SHOULD"])
    assert capsys.readouterr().out.startswith("basic/content-mismatch\t")
    main(["list", SUITE, "--spec", "FAKE-MESSAGE"])
    assert capsys.readouterr().out.startswith("extra/message-ok\t")


def test_lint_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "s" / "a").mkdir(parents=True)
    (tmp_path / "SPEC.md").write_text("- **FAKE-CALL-1** (MUST) x\n- **FAKE-CALL-9** (MUST) y\n")
    (tmp_path / "features.yaml").write_text("read: Read\n")
    (tmp_path / "excluded.yaml").write_text("FAKE-CALL-9: not observable\n")
    (tmp_path / "uncited.yaml").write_text("FAKE-CALL-9: enforced by the adapter\n")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "call.py").write_text("CALL = 1  # FAKE-CALL-1\n")
    paths = [
        *("--scenarios", str(tmp_path / "s"), "--spec-file", str(tmp_path / "SPEC.md")),
        *("--features-file", str(tmp_path / "features.yaml")),
        *("--excluded", str(tmp_path / "excluded.yaml")),
        *("--code", str(tmp_path / "code"), "--uncited", str(tmp_path / "uncited.yaml")),
    ]
    (tmp_path / "s" / "a" / "call-ok.yaml").write_text(
        (DATA / "suite" / "basic" / "call-ok.yaml").read_text()
    )
    assert main(["lint", *paths]) == 0
    assert capsys.readouterr().out == "lint: ok\n"
    (tmp_path / "excluded.yaml").write_text("{}\n")
    (tmp_path / "uncited.yaml").write_text("{}\n")
    assert main(["lint", *paths]) == 1
    out = capsys.readouterr().out
    assert "FAKE-CALL-9: (MUST) covered by no scenario" in out
    assert "FAKE-CALL-9: (MUST) cited by no comment or docstring in code/" in out


@pytest.mark.subprocess
def test_smoke_says_what_the_implementation_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smoke", "--impl", fake_command("ok")]) == 0
    out = capsys.readouterr().out
    assert "smoke: ok: fake 0 (python), protocol 1" in out
    assert "features: edit, read, test_tools, write" in out
    assert main(["smoke", "--impl", fake_command("bad_protocol"), "--timeout", "5"]) == 3
    assert "not usable: [version_mismatch]" in capsys.readouterr().out


@pytest.mark.subprocess
def test_python_dash_m_conformance_is_the_same_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "list", SUITE, "-k", "call-ok"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout.split("\t")[0]) == (0, "basic/call-ok")


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere() -> None:
    results = [
        ScenarioResult(id="one", outcome=Outcome.PASS, area="a"),
        ScenarioResult(id="two", outcome=Outcome.CRASH, area="a"),
    ]
    terminal, plain = io.StringIO(), io.StringIO()
    bar, lines = Progress(2, terminal, tty=True), Progress(2, plain, tty=False)
    for result in results:
        bar.update(result)
        lines.update(result)
    bar.finish()
    assert terminal.getvalue().count("\r[") == 2
    assert "2/2 bad: 1" in terminal.getvalue()
    assert terminal.getvalue().endswith("\n")
    assert plain.getvalue().splitlines() == ["pass            a/one", "crash           a/two"]


def test_several_reports_in_one_run_each_to_its_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    jsonl, markdown, junit = tmp_path / "r.jsonl", tmp_path / "r.md", tmp_path / "r.xml"
    status, out = run(
        capsys,
        *("--report", f"jsonl={jsonl}", "--report", f"markdown={markdown}"),
        *("--report", f"junit={junit}", "--no-progress"),
    )
    assert status == 1
    assert f"report (junit): {junit}" in out
    header = json.loads(jsonl.read_text().splitlines()[0])
    assert header["features"] == ["edit", "read", "test_tools", "write"]
    assert ET.parse(junit).getroot().tag == "testsuites"
    assert "Features: edit, read, test_tools, write." in markdown.read_text()
    with pytest.raises(SystemExit):
        main(["run", SUITE, "--impl", FAKE, "--report", "yaml"])
    with pytest.raises(SystemExit):
        main(["run", SUITE, "--impl", FAKE, "--report", "jsonl="])
    assert main(["run", SUITE, "--impl", FAKE, "--report", "jsonl=-", "--report", "html=-"]) == 2


@pytest.mark.subprocess
def test_junit_parses_when_the_adapter_writes_colour_codes_and_nuls_to_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junit = tmp_path / "r.xml"
    status = main(
        ["run", SUITE, "--impl", fake_command("noisy_stderr"), "--report", f"junit={junit}"]
    )
    capsys.readouterr()
    assert status == 1
    text = junit.read_text("utf-8")
    assert "\x00" not in text
    assert "\x1b" not in text
    errs = [e.text or "" for e in ET.parse(junit).getroot().iter("system-err")]
    assert errs
    assert "fake: handling call" in "".join(errs)
    assert "[31" not in "".join(errs)


def test_the_markdown_report_groups_by_feature_and_spec_section_for_a_step_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    markdown = tmp_path / "r.md"
    run(capsys, "--report", f"markdown={markdown}")
    text = markdown.read_text()
    assert text.splitlines()[2].startswith("**FAILED**: 3 of 4 scenarios passing")
    by_feature = text.split("## By feature")[1].split("\n## ")[0]
    assert "| bash | 0 | 0 | 1 | 1 |" in by_feature
    assert "## By SPEC section" in text
    assert "<details><summary>fail basic/content-mismatch:" in text


def test_summary_prints_each_saved_report_then_all_side_by_side(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    jsonl = tmp_path / "r.jsonl"
    run(capsys, "--report", f"jsonl={jsonl}")
    assert main(["summary", str(jsonl), str(jsonl)]) == 1
    out = capsys.readouterr().out
    assert f"== {jsonl}: fake" in out
    verdict = "FAILED: 1 of 4 scenarios did not pass (1 fail); 2 passed, 1 not applicable."
    assert out.count(verdict) == 2
    assert "== side by side" in out
    assert "== all 2 reports" not in out
    assert main(["summary", str(tmp_path / "missing.jsonl")]) == 2


def test_keep_prints_each_kept_sandbox(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(capsys, "-k", "call-ok", "--keep", "--no-progress")
    assert status == 0
    kept = [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("kept call-ok")]
    assert len(kept) == 1
    assert Path(kept[0], "root").is_dir()
    shutil.rmtree(kept[0])


@pytest.mark.subprocess
def test_the_adapter_template_speaks_protocol_v1(capsys: pytest.CaptureFixture[str]) -> None:
    template = "stdio:" + shlex.join([sys.executable, "-m", "conformance.adapter_template"])
    assert main(["smoke", "--impl", template]) == 0
    assert "smoke: ok: my-agent 0 (python), protocol 1" in capsys.readouterr().out
    assert main(["run", SUITE, "--impl", template, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "PASSED, vacuously: none of the 4 scenarios applies (why above)." in out
    assert "not reported by the implementation: error_code, error_name, stage" in out
