"""``toolconf matrix``: statuses, merging, the behaviour table, both pages, and the HTML page
in a real headless Chromium.

The browser tests (marked ``browser``) drive Debian's Chromium through
chromedriver: the page renders both tables with sticky heads, a clicked cell
opens its scenarios right under its row with those that did not hold first,
Escape closes it, nothing runs off the side at 1,400 px (with many columns
too), and the browser logs no error. Without Chromium they skip, saying so;
``.ci/run`` installs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from headless_browser import chromium_session, console_errors, page_width

from conformance.analysis.behaviour_table import build_behaviour_table
from conformance.analysis.matrix import build_matrix, load_reports, scenario_status
from conformance.analysis.matrix_markdown import README_BEGIN, README_END, matrix_markdown
from conformance.analysis.matrix_pages import matrix_pages, replace_block
from conformance.cli import main
from conformance.errors import ConformanceError
from conformance.suite.behaviours import Behaviour
from conformance.suite.evidence import Citation, EvidenceEntry, EvidenceSet
from conformance.suite.spec import Spec

SPEC = """# Spec

## 12. Read

- **READ-A-1** (MUST) a.
- **READ-M-1** (MUST) measured.

## 13. Write

- **WRITE-B-1** (MUST) b.
"""

PROVENANCE = {"READ-A-1": "documented", "READ-M-1": "measured", "WRITE-B-1": "documented"}

BEHAVIOURS = """\
- id: reads
  group: Reading
  title: Reads read
  question: Does it read?
  spec: [READ-A-1]
  scenarios: [r1, both]
- id: writes
  group: Writing
  title: Writes write
  question: Does it write?
  spec: [WRITE-B-1]
  scenarios: [w1, both]
"""


def _levels(behaviour: str, rendering: str = "none") -> dict[str, Any]:
    return {
        "behaviour": {"verdict": behaviour},
        "identity": {"verdict": "none"},
        "rendering": {"verdict": rendering},
    }


def _report(path: Path, impl: str, name: str, version: str, results: list[dict[str, Any]]) -> Path:
    header = {
        "type": "header",
        "impl": impl,
        "implementation": {"name": name, "version": version},
        "started": "2026-12-02T00:00:00+00:00",
    }
    lines = [header] + [{"type": "result", "duration": 1.0, **r} for r in results]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _result(sid: str, outcome: str, spec: list[str], **more: Any) -> dict[str, Any]:
    return {"id": sid, "outcome": outcome, "spec": spec, "title": f"title of {sid}", **more}


def _reports(tmp: Path) -> list[Path]:
    return [
        _report(
            tmp / "a.jsonl",
            "direct",
            "reference",
            "0.1.0",
            [
                _result("r1", "pass", ["READ-A-1"], levels=_levels("pass")),
                _result("w1", "fail", ["WRITE-B-1"], message="step 1: is_error </script>"),
                _result("both", "pass", ["READ-A-1", "WRITE-B-1"], levels=_levels("not_observed")),
            ],
        ),
        _report(
            tmp / "b1.jsonl",
            "mcp:peer",
            "peer",
            "2",
            [_result("r1", "not_applicable", ["READ-A-1"], reason="requires read")],
        ),
        _report(
            tmp / "b2.jsonl",
            "mcp:peer",
            "peer",
            "2",
            [_result("w1", "timeout", ["WRITE-B-1"]), _result("r1", "xfail", ["READ-A-1"])],
        ),
    ]


def _spec(provenance: dict[str, str] | None = None) -> Spec:
    entries = {
        spec_id: EvidenceEntry(
            provenance=kind,  # type: ignore[arg-type]
            sources=(Citation(source="project", says="a test"),),
        )
        for spec_id, kind in (provenance or PROVENANCE).items()
    }
    return Spec(SPEC, evidence=EvidenceSet(entries=entries))


def _behaviour(bid: str, spec: tuple[str, ...], scenarios: tuple[str, ...]) -> Behaviour:
    return Behaviour(bid, "Group", f"title {bid}", f"question {bid}?", spec, scenarios)


def test_statuses_sections_and_merged_runs(tmp_path: Path) -> None:
    """One column per implementation (parts merged), one row per section, four statuses."""
    assert scenario_status({"outcome": "xfail", "raw_outcome": "fail"}) == "fail"
    assert scenario_status({"outcome": "pass", "levels": _levels("not_observed")}) == "not observed"
    matrix = build_matrix(load_reports(_reports(tmp_path)), _spec())
    assert matrix.sections == ["12. Read", "13. Write"]
    direct, peer = matrix.rows
    assert [direct.cells[s].verdict for s in matrix.sections] == ["pass", "fail"]
    assert direct.cells["12. Read"].count("not observed") == 1
    assert (direct.total("pass"), direct.total("fail"), direct.total("not observed")) == (1, 1, 1)
    # the second part's r1 replaced the first's: xfail is a failure in the matrix
    assert [e.status for e in peer.cells["12. Read"].entries] == ["fail"]
    assert peer.cells["13. Write"].entries[0].outcome == "timeout"
    # the shade is the behaviour level's: the timeout failed behaviour, the xfail had no levels
    assert str(peer.cells["13. Write"].levels["behaviour"]) == "0/1"
    assert str(direct.cells["12. Read"].levels["behaviour"]) == "1/1"


def test_behaviour_states_come_from_the_behaviour_level_alone() -> None:
    """kept / partly / not kept / differs / n/a, rendering never counts, missing is not run."""
    report = load_reports_from(
        [
            _result("held", "pass", ["READ-A-1"], levels=_levels("pass")),
            _result("worded", "fail", ["READ-A-1"], levels=_levels("pass", rendering="fail")),
            _result("broke", "fail", ["READ-A-1"], levels=_levels("fail")),
            _result("chose", "fail", ["READ-M-1"], levels=_levels("fail")),
            _result("both", "fail", ["READ-A-1", "READ-M-1"], levels=_levels("fail")),
            _result("skipped", "not_applicable", ["READ-A-1"]),
            _result("crashed", "crash", ["READ-A-1"]),
        ]
    )
    behaviours = [
        _behaviour("kept", ("READ-A-1",), ("held", "worded")),
        _behaviour("partly", ("READ-A-1",), ("held", "broke", "skipped")),
        _behaviour("not-kept", ("READ-A-1",), ("broke", "crashed")),
        _behaviour("differs", ("READ-A-1", "READ-M-1"), ("held", "chose")),
        # a scenario citing a documented ID of the behaviour too is a breach, not a choice
        _behaviour("documented-too", ("READ-A-1", "READ-M-1"), ("held", "both")),
        _behaviour("n-a", ("READ-A-1",), ("skipped", "gone")),
    ]
    table = build_behaviour_table(report, behaviours, _spec())
    states = {row.behaviour.id: row.cells[0].state for row in table.rows}
    assert states == {
        "kept": "kept",
        "partly": "partly",
        "not-kept": "not kept",
        "differs": "differs",
        "documented-too": "partly",
        "n-a": "n/a",
    }
    kept = table.rows[0].cells[0]
    assert (kept.held, kept.observed) == (2, 2)
    assert str(kept.levels["rendering"]) == "0/1"  # a figure beside the state, never the state
    not_applicable = table.rows[-1].cells[0]
    assert [j.verdict for j in not_applicable.ordered()] == ["unobserved", "not run"]
    partly = table.rows[1].cells[0]
    assert next(j.entry.id for j in partly.ordered()) == "broke"  # failures first
    assert table.rows[3].provenance == {"documented": ("READ-A-1",), "measured": ("READ-M-1",)}
    counts = table.counts(0)
    assert (counts["kept"], counts["partly"], counts["differs"], counts["n/a"]) == (1, 2, 1, 1)


def load_reports_from(results: list[dict[str, Any]], name: str = "reference") -> list[Any]:
    from conformance.analysis.fidelity import Report  # noqa: PLC0415

    header = {"impl": "direct", "implementation": {"name": name, "version": "1"}}
    return [Report(header, results)]


def test_the_engine_goes_beyond_the_original_where_a_release_does_not_keep_it() -> None:
    from conformance.analysis.fidelity import Report  # noqa: PLC0415

    def report(name: str, version: str, verdict: str) -> Report:
        header = {"impl": f"{name}:{version}", "implementation": {"name": name, "version": version}}
        return Report(header, [_result("r1", "pass", ["READ-A-1"], levels=_levels(verdict))])

    reports = [
        report("reference", "0.1.0", "pass"),
        report("claude-code", "2.1.88", "pass"),
        report("claude-code", "2.1.332", "fail"),
        report("other-agent", "1", "fail"),
    ]
    table = build_behaviour_table(reports, [_behaviour("b", ("READ-A-1",), ("r1",))], _spec())
    assert table.rows[0].beyond == (2,)  # the failing other agent is not the original


def test_markdown_page_links_each_cell_to_its_scenarios(tmp_path: Path) -> None:
    loaded = load_reports(_reports(tmp_path))
    spec = _spec()
    matrix = build_matrix(loaded, spec)
    behaviours = [_behaviour("reads", ("READ-A-1",), ("r1", "both"))]
    table = build_behaviour_table(loaded, behaviours, spec)
    page = matrix_markdown(
        matrix, date="2026-12-02", command="toolconf matrix a b", behaviours=table
    )
    assert "| [title reads](#reads)<br><sub>documented</sub> | kept 1/1 | not kept 0/1 |" in page
    assert '<a id="reads"></a>' in page
    assert "| `r1` | pass | **fail** |" in page  # the failing scenario is listed first
    assert '<a id="section-1-0"></a>' in page
    assert "[0/1 held, 1 fail](#section-1-0)" in page
    assert "| `w1` | fail | fail |" in page


def test_readme_block_is_replaced_between_its_markers(tmp_path: Path) -> None:
    behaviours = tmp_path / "behaviours.yaml"
    behaviours.write_text(BEHAVIOURS)
    spec = tmp_path / "SPEC.md"
    spec.write_text(SPEC)
    pages = matrix_pages(
        _reports(tmp_path),
        spec=spec,
        behaviours=behaviours,
        date="d",
        command="cmd",
        readme_link="results/matrix.md",
    )
    assert pages.readme.startswith(README_BEGIN)
    assert pages.readme.endswith(README_END)
    assert "(results/matrix.md#writes)" in pages.readme
    readme = f"# Title\n\nbefore\n{README_BEGIN}\nold\n{README_END}\nafter\n"
    replaced = replace_block(readme, pages.readme)
    assert replaced.startswith("# Title\n\nbefore\n" + README_BEGIN)
    assert replaced.endswith(README_END + "\nafter\n")
    assert "\nold\n" not in replaced
    with pytest.raises(ConformanceError, match="no behaviour block"):
        replace_block("# no markers\n", pages.readme)
    broken = tmp_path / "broken.yaml"
    broken.write_text("- id: Bad Id\n")
    with pytest.raises(ConformanceError, match="behaviours file has problems"):
        matrix_pages(_reports(tmp_path), spec=spec, behaviours=broken, date="d", command="")


EVIDENCE = {
    "sources.yaml": "project:\n  kind: project\n  title: This project\n",
    "12-read.yaml": "".join(
        f"{i}:\n  provenance: {PROVENANCE[i]}\n  sources:\n    - source: project\n"
        "      says: a test\n"
        for i in ("READ-A-1", "READ-M-1")
    ),
    "13-write.yaml": "WRITE-B-1:\n  provenance: documented\n  sources:\n"
    "    - source: project\n      says: a test\n",
}


def _write_pages(tmp: Path, reports: list[Path], behaviours: str = BEHAVIOURS) -> Path:
    (tmp / "SPEC.md").write_text(SPEC)
    evidence = tmp / "spec" / "evidence"
    evidence.mkdir(parents=True)
    for name, text in EVIDENCE.items():
        (evidence / name).write_text(text)
    (tmp / "behaviours.yaml").write_text(behaviours)
    readme = tmp / "README.md"
    readme.write_text(f"# Readme\n\n{README_BEGIN}\n{README_END}\n")
    out = tmp / "out"
    argv = [
        "matrix",
        *map(str, reports),
        "--spec-file",
        str(tmp / "SPEC.md"),
        "--behaviours",
        str(tmp / "behaviours.yaml"),
        "--report",
        f"markdown={out / 'matrix.md'}",
        "--report",
        f"html={out / 'matrix.html'}",
        "--readme",
        str(readme),
    ]
    assert main(argv) == 0
    assert "](out/matrix.md#reads)" in readme.read_text()
    return out / "matrix.html"


@pytest.mark.browser
@pytest.mark.slow
def test_the_html_page_renders_and_drills_down_in_chromium(tmp_path: Path) -> None:
    """Both tables render with sticky heads, a click opens the cell's scenarios under its row,
    failures first; Escape closes it; no errors; nothing wider than the window."""
    from selenium.webdriver.common.by import By  # noqa: PLC0415
    from selenium.webdriver.common.keys import Keys  # noqa: PLC0415

    page = _write_pages(tmp_path, _reports(tmp_path))
    with chromium_session(tmp_path / "profile") as chrome:
        chrome.get(page.as_uri())
        assert chrome.find_element(By.TAG_NAME, "h1").text.startswith("Which contract")
        heads = chrome.find_elements(By.CSS_SELECTOR, "#behaviours thead th")
        assert [h.text.split("\n")[0] for h in heads] == ["behaviour", "reference", "peer"]
        sticky = chrome.execute_script(
            "return [getComputedStyle(document.querySelector('#behaviours thead th')).position,"
            " getComputedStyle(document.querySelector('#behaviours th.rowhead')).position]"
        )
        assert sticky == ["sticky", "sticky"]
        cells = chrome.find_elements(By.CSS_SELECTOR, "#behaviours td.cell")
        assert [c.text.split("\n")[0] for c in cells] == [
            "kept",
            "not kept",
            "not kept",
            "not kept",
        ]
        assert "behaviour 1/1 held" in cells[0].get_attribute("title")
        assert cells[0].value_of_css_property("background-color") != cells[1].value_of_css_property(
            "background-color"
        )
        cells[3].click()  # the peer's writes: the timeout first, then the not-applicable one
        detail = chrome.find_element(By.CSS_SELECTOR, "#behaviours tr.detail")
        previous = chrome.execute_script(
            "return arguments[0].previousElementSibling.contains(arguments[1])", detail, cells[3]
        )
        assert previous  # the panel opened right under the clicked cell's row
        rows = detail.find_elements(By.CSS_SELECTOR, "table.scen tbody tr")
        assert [r.find_element(By.TAG_NAME, "code").text for r in rows] == ["w1", "both"]
        assert rows[0].get_attribute("class") == "v-fail"
        assert "did not hold" in rows[0].text
        assert "timeout" in rows[0].text
        assert "WRITE-B-1" in detail.text
        assert "documented" in detail.text
        chrome.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
        assert chrome.find_elements(By.CSS_SELECTOR, "tr.detail") == []
        section = chrome.find_element(By.CSS_SELECTOR, '#sections td.cell[data-r="1"][data-c="0"]')
        section.click()
        text = chrome.find_element(By.CSS_SELECTOR, "#sections tr.detail").text
        assert "w1" in text
        assert "</script>" in text
        assert text.index("w1") < text.index("both")
        assert console_errors(chrome) == []
        assert page_width(chrome) <= 1400


@pytest.mark.browser
@pytest.mark.slow
def test_many_columns_scroll_inside_their_frame_not_the_page(tmp_path: Path) -> None:
    """Fourteen implementations: the table scrolls in its frame, the page stays 1,400 px."""
    from selenium.webdriver.common.by import By  # noqa: PLC0415

    reports = [
        _report(
            tmp_path / f"agent-{n}.jsonl",
            f"agent:some-rather-long-agent-name-{n}",
            f"some-rather-long-agent-name-{n}",
            "1.0.0",
            [_result("r1", "pass", ["READ-A-1"], levels=_levels("pass"))],
        )
        for n in range(14)
    ]
    page = _write_pages(tmp_path, reports)
    with chromium_session(tmp_path / "profile") as chrome:
        chrome.get(page.as_uri())
        frame = chrome.find_element(By.CSS_SELECTOR, ".wrap")
        assert chrome.execute_script("return arguments[0].scrollWidth", frame) > 1400
        cells = chrome.find_elements(By.CSS_SELECTOR, "#behaviours td.cell")
        chrome.execute_script("arguments[0].scrollIntoView({inline: 'center'})", cells[13])
        cells[13].click()
        panel = chrome.find_element(By.CSS_SELECTOR, "tr.detail .panel")
        left = chrome.execute_script("return arguments[0].getBoundingClientRect().left", panel)
        assert 0 <= left < 100  # the panel sits where the user looks, not far off to the left
        assert page_width(chrome) <= 1400
        assert console_errors(chrome) == []


@pytest.mark.browser
@pytest.mark.slow
def test_a_drill_down_opens_under_the_row_the_user_clicked(tmp_path: Path) -> None:
    """Forty rows: for a cell clicked at the bottom of the frame, the frame scrolls just
    enough to show its whole panel while the clicked row stays in sight."""
    from selenium.webdriver.common.by import By  # noqa: PLC0415

    many = "".join(
        BEHAVIOURS.replace("id: reads", f"id: reads-{n}").split("- id: writes")[0]
        for n in range(40)
    ).replace("id: reads-0\n", "id: reads\n")
    page = _write_pages(tmp_path, _reports(tmp_path), behaviours=many)
    with chromium_session(tmp_path / "profile", height=900) as chrome:
        chrome.get(page.as_uri())
        cell = chrome.find_element(By.CSS_SELECTOR, '#behaviours td.cell[data-r="30"][data-c="1"]')
        chrome.execute_script("arguments[0].scrollIntoView({block: 'end'})", cell)
        cell.click()
        header = chrome.execute_script(
            "return document.querySelector('#behaviours thead th').getBoundingClientRect().bottom"
        )
        top = chrome.execute_script("return arguments[0].getBoundingClientRect().top", cell)
        assert top >= header - 1  # the clicked row is still in sight, under the header
        detail = chrome.find_element(By.CSS_SELECTOR, "tr.detail")
        bottom = chrome.execute_script(
            "const frame = arguments[1].getBoundingClientRect();"
            "return [arguments[0].getBoundingClientRect().bottom,"
            " Math.min(frame.bottom, window.innerHeight)]",
            detail,
            chrome.find_element(By.CSS_SELECTOR, ".wrap"),
        )
        assert bottom[0] <= bottom[1] + 1  # and the whole panel below it
        assert page_width(chrome) <= 1400
        assert console_errors(chrome) == []


@pytest.mark.subprocess
def test_without_chromium_the_browser_check_is_a_visible_skip_with_the_install_command(
    tmp_path: Path,
) -> None:
    """The skip and its install command are in the run's closing lines, not only in ``-rs``."""
    (tmp_path / "bin").mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            f"{__file__}::test_the_html_page_renders_and_drills_down_in_chromium",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "PATH": str(tmp_path / "bin")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    closing = done.stdout.split("skipped, with what would run them")[1]
    assert "test_the_html_page_renders_and_drills_down_in_chromium" in closing
    assert "apt-get install chromium chromium-driver" in closing
