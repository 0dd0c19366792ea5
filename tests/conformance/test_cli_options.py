"""One meaning per option across the ``toolconf`` commands and the pytest plugin.

Selection (``--spec``, ``--area``, ``--level``, ``--feature``, ``--last-failed``,
``--from-report``, ``-x`` / ``--maxfail``), output (``--report FORMAT[=PATH]``,
the old spellings still working with a note), ``--spec-file``, ``--impl``'s
schemes, install commands in errors, ``summary`` side by side, npm's output
on a first install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from conftest import DATA, FAKE

from conformance.cli import main
from conformance.errors import ConformanceError, MissingExtra
from conformance.peers import npm
from conformance.peers.registry import connect, known_schemes, scheme_usage

SUITE = str(DATA / "suite")
_INSTALLED = any(ep.name == "toolconf" for ep in entry_points(group="pytest11"))
PLUGIN = [] if _INSTALLED else ["-p", "conformance.pytest_plugin"]
ALL = {"call-ok", "content-mismatch", "message-ok", "needs-bash"}


def listed(capsys: pytest.CaptureFixture[str], *args: str) -> set[str]:
    assert main(["list", SUITE, *args]) == 0
    return {line.split("\t")[0].split("/")[1] for line in capsys.readouterr().out.splitlines()}


def ran(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, set[str], str]:
    """A run of the example suite: status, the ids run (from the progress lines), stdout."""
    status = main(["run", SUITE, "--impl", FAKE, *args])
    out = capsys.readouterr().out
    ids = {
        line.split()[1].split("/")[1]
        for line in out.splitlines()
        if line[:1].isalpha()
        and "/" in line
        and line.split()[0] in {"pass", "fail", "not_applicable"}
    }
    return status, ids, out


@pytest.mark.parametrize(
    ("spec", "chosen"),
    [
        ("FAKE-CALL-1", {"call-ok", "needs-bash"}),  # an ID
        ("FAKE-CALL", {"call-ok", "content-mismatch", "needs-bash"}),  # a prefix ending at a dash
        ("FAKE-CALL-", {"call-ok", "content-mismatch", "needs-bash"}),
        ("fake-*-1", {"call-ok", "needs-bash", "message-ok"}),  # a glob, any case
        ("FAKE-CAL", set()),  # not a dash-ended prefix
    ],
)
def test_spec_means_the_same_in_run_and_list(
    capsys: pytest.CaptureFixture[str], spec: str, chosen: set[str]
) -> None:
    if chosen:
        assert listed(capsys, "--spec", spec) == chosen
        status, ids, _ = ran(capsys, "--spec", spec)
        assert ids == chosen
        return
    assert main(["list", SUITE, "--spec", spec]) == 5
    assert "no scenarios selected by --spec FAKE-CAL" in capsys.readouterr().err
    status, _, out = ran(capsys, "--spec", spec)
    assert (status, "no scenarios selected by --spec FAKE-CAL" in out) == (5, True)


def test_a_file_given_to_spec_points_at_spec_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--spec", "SPEC.md"])
    assert info.value.code == 2
    assert "SPEC.md itself is --spec-file" in capsys.readouterr().err


def test_area_level_and_feature_select(capsys: pytest.CaptureFixture[str]) -> None:
    assert listed(capsys, "--area", "extra") == {"message-ok", "needs-bash"}
    assert listed(capsys, "--level", "should") == {"content-mismatch"}
    assert listed(capsys, "--level", "MUST", "--level", "MAY") == {
        "call-ok",
        "message-ok",
        "needs-bash",
    }
    assert listed(capsys, "--feature", "bash") == {"needs-bash"}
    assert listed(capsys, "--area", "basic", "--feature", "read") == {"call-ok", "content-mismatch"}
    assert ran(capsys, "--area", "extra", "--feature", "test_tools")[1] == {"message-ok"}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--level", "behaviour"], "behaviour is an assertion level, which decides with --levels"),
        (
            ["--levels", "MUST"],
            "MUST, SHOULD and MAY are requirement levels, selected with --level",
        ),
        (["--feature", "telepathy"], "unknown feature 'telepathy'; choose from bash,"),
        (["--maxfail", "0"], "'0' is not a whole number of at least 1"),
    ],
)
def test_a_confused_option_says_which_one_was_meant(
    capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", SUITE, *args])
    assert info.value.code == 2
    assert says in capsys.readouterr().err


def test_from_report_reruns_the_failures_of_a_saved_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "r.jsonl"
    assert ran(capsys, "--report", f"jsonl={report}")[0] == 1
    status, ids, _ = ran(capsys, "--from-report", str(report))
    assert (status, ids) == (1, {"content-mismatch"})
    assert listed(capsys, "--from-report", str(report)) == {"content-mismatch"}
    clean = tmp_path / "clean.jsonl"
    ran(capsys, "-k", "call-ok", "--report", f"jsonl={clean}")
    status, _, out = ran(capsys, "--from-report", str(clean))
    assert (status, f"{clean} has no failures to rerun" in out) == (5, True)
    assert main(["run", SUITE, "--from-report", str(tmp_path / "none.jsonl")]) == 2
    assert "no such report" in capsys.readouterr().err


def test_last_failed_reruns_what_the_last_runs_of_the_impl_left_failing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLCONF_LAST_FAILED", str(tmp_path / "record.json"))
    assert main(["run", SUITE, "--impl", FAKE, "--last-failed"]) == 2
    assert "no run of " in capsys.readouterr().err
    assert ran(capsys)[0] == 1
    status, ids, _ = ran(capsys, "--last-failed")
    assert (status, ids) == (1, {"content-mismatch"})
    record = json.loads((tmp_path / "record.json").read_text())
    assert record[FAKE]["failed"] == ["content-mismatch"]
    # a run of other scenarios keeps the failure; once it passes, nothing is left to rerun
    ran(capsys, "-k", "call-ok")
    assert json.loads((tmp_path / "record.json").read_text())[FAKE]["failed"] == [
        "content-mismatch"
    ]
    record[FAKE]["failed"] = ["call-ok"]
    (tmp_path / "record.json").write_text(json.dumps(record))
    assert ran(capsys, "--last-failed")[:2] == (0, {"call-ok"})
    status, _, out = ran(capsys, "--last-failed")
    assert (status, f"the last runs of {FAKE} left no failures" in out) == (5, True)
    monkeypatch.setenv("TOOLCONF_LAST_FAILED", "off")
    assert main(["run", SUITE, "--impl", FAKE, "--last-failed"]) == 2
    assert "TOOLCONF_LAST_FAILED turns off" in capsys.readouterr().err


def test_exitfirst_and_maxfail_stop_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    status, ids, out = ran(capsys, "-x")
    assert status == 1
    assert "content-mismatch" in ids
    assert "message-ok" not in ids
    assert "stopped after 1 scenario not passing (--maxfail 1): 2 not run" in out
    status, ids, out = ran(capsys, "--maxfail", "2")
    assert (status, ids, "stopped after" in out) == (1, ALL, False)


def test_the_old_output_spellings_still_work_with_a_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "r.jsonl"
    assert main(["run", SUITE, "--impl", FAKE, "--report", "jsonl", "--output", str(report)]) == 1
    err = capsys.readouterr().err
    assert "--output is deprecated and goes in the next release; use --report FORMAT=PATH" in err
    assert report.read_text().startswith('{"type": "header"')
    spec = tmp_path / "SPEC.md"
    spec.write_text("## 1. Calls\n\n- **FAKE-CALL-1** (MUST) x\n")
    assert main(["matrix", str(report), "--spec", str(spec), "--output-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "--spec is deprecated and goes in the next release; use --spec-file FILE" in err
    assert (tmp_path / "matrix.md").is_file()
    assert (tmp_path / "matrix.html").is_file()
    merged, page = tmp_path / "merged.jsonl", tmp_path / "fidelity.md"
    assert main(["fidelity", str(report), "--spec-file", str(spec), "--jsonl", str(merged)]) == 0
    captured = capsys.readouterr()
    assert "use --report jsonl=PATH" in captured.err
    assert "# " in captured.out  # the page still goes to stdout
    assert merged.read_text().startswith('{"type": "header"')
    assert main(["fidelity", str(report), "--spec-file", str(spec), "--output", str(page)]) == 0
    assert page.read_text().startswith("# ")


def test_report_is_the_output_option_of_every_command_that_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "r.jsonl"
    ran(capsys, "--report", f"jsonl={report}")
    spec = tmp_path / "SPEC.md"
    spec.write_text("## 1. Calls\n\n- **FAKE-CALL-1** (MUST) x\n- **FAKE-CALL-2** (SHOULD) y\n")
    page = tmp_path / "fid.md"
    assert (
        main(["fidelity", str(report), "--spec-file", str(spec), "--report", f"markdown={page}"])
        == 0
    )
    assert capsys.readouterr().out == ""
    assert "FAKE-CALL-1" in page.read_text()
    diff = tmp_path / "diff.md"
    argv = [
        "diff",
        str(report),
        str(report),
        "--spec-file",
        str(spec),
        "--report",
        f"markdown={diff}",
    ]
    assert main(argv) == 0
    assert f"--report markdown={diff}" in diff.read_text()  # the regenerating command
    md = tmp_path / "only.md"
    assert (
        main(["matrix", str(report), "--spec-file", str(spec), "--report", f"markdown={md}"]) == 0
    )
    assert md.is_file()
    assert not (tmp_path / "matrix.html").exists()  # only the reports asked for
    with pytest.raises(SystemExit):
        main(["matrix", str(report), "--report", "pdf"])
    assert "choose from markdown, html" in capsys.readouterr().err
    for command in ("run", "fidelity", "diff", "matrix", "mutants", "bench", "stress"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--report FORMAT[=PATH]" in capsys.readouterr().out, command


def test_impl_help_lists_every_registered_scheme(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "smoke", "bench", "stress"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for scheme in known_schemes():
            assert scheme_usage(scheme) in text, (command, scheme)
    assert {"direct", "stdio", "mutant", "claude-code", "mcp"} <= set(known_schemes())


def test_a_missing_extra_names_its_pip_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    for name in [m for m in sys.modules if m.startswith("conformance.peers.mcp")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(MissingExtra) as info:
        connect("mcp:toolconf")
    assert str(info.value) == (
        "the mcp: connector needs the mcp extra: pip install 'toolsys-reference[mcp]' "
        "(No module named 'mcp')"
    )
    assert main(["run", SUITE, "--impl", "mcp:toolconf"]) == 2
    assert "pip install 'toolsys-reference[mcp]'" in capsys.readouterr().err
    assert isinstance(info.value, ConformanceError)


@pytest.mark.subprocess
def test_the_mcp_server_without_its_extra_names_its_pip_command(tmp_path: Path) -> None:
    hidden = tmp_path / "sitecustomize.py"
    hidden.write_text("import sys; sys.modules['mcp'] = None\n")
    done = subprocess.run(
        [sys.executable, "-m", "reference.mcp_server", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 1
    assert "needs the mcp extra: pip install 'toolsys-reference[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_summary_puts_reports_side_by_side_and_never_adds_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "r.jsonl"
    ran(capsys, "--report", f"jsonl={report}")
    spec = tmp_path / "SPEC.md"
    spec.write_text("## 3. Calls\n\n- **FAKE-CALL-1** (MUST) x\n- **FAKE-CALL-2** (SHOULD) y\n")
    assert main(["summary", str(report), str(report), "--spec-file", str(spec)]) == 1
    out = capsys.readouterr().out
    assert "not passing, by SPEC section:\n  3 Calls: 1: content-mismatch (fail)\n" in out
    side = out.split("== side by side")[1]
    assert "never added together" in side
    rows = {line.split()[0]: line.split()[1:] for line in side.splitlines()[2:] if line}
    assert rows["total"] == ["4", "4"]
    assert rows["fail"] == ["1", "1"]
    assert "8" not in out.split("== side by side")[1]


def _fake_npm(bin_dir: Path) -> None:
    bin_dir.mkdir()
    (bin_dir / "node").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "npm").write_text(
        textwrap.dedent(
            """\
            #!/bin/sh
            echo "npm progress: fetching" >&2
            mkdir -p node_modules/fake-peer
            echo '{"name": "fake-peer"}' > node_modules/fake-peer/package.json
            echo "added 1 package in 0.1s"
            """
        )
    )
    for name in ("node", "npm"):
        (bin_dir / name).chmod(0o755)


def test_a_first_npm_install_shows_npms_output_on_stderr(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_npm(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TOOLCONF_CACHE", str(tmp_path / "cache"))
    installed = npm.ensure_package("fake-peer", "1.0.0")
    assert (installed / "package.json").is_file()
    out, err = capfd.readouterr()
    assert out == ""
    assert "toolconf: installing fake-peer@1.0.0" in err
    assert "npm progress: fetching" in err
    assert "added 1 package in 0.1s" in err
    npm.ensure_package("fake-peer", "1.0.0")
    assert capfd.readouterr() == ("", "")  # installed once, quiet after


@pytest.mark.subprocess
def test_the_plugin_starts_the_implementation_uncaptured(tmp_path: Path) -> None:
    """What an implementation prints while it starts (a first install) reaches the terminal,
    even when every scenario passes."""
    (tmp_path / "noisy_engine.py").write_text(
        textwrap.dedent(
            """\
            import sys
            from conformance.peers.fake_adapter import FakeEngine

            def make():
                print("installing the peer, npm progress follows", file=sys.stderr)
                return FakeEngine()
            """
        )
    )
    scenario = DATA / "suite" / "basic" / "call-ok.yaml"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *PLUGIN,
            "-p",
            "no:cacheprovider",
            str(scenario),
            "--toolconf-impl",
            "direct:noisy_engine:make",
            "-q",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "installing the peer, npm progress follows" in done.stdout + done.stderr


def test_mutants_spec_chooses_the_mutants_breaking_a_matching_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["mutants", "--list", "--spec", "read-dedup"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:] if line.strip()]
    assert rows
    assert all(any(i.startswith("READ-DEDUP-") for i in row[2].split(",")) for row in rows)
    assert main(["mutants", "--list", "--spec", "NO-SUCH-ID"]) == 5
    assert "no mutant breaks NO-SUCH-ID" in capsys.readouterr().err
