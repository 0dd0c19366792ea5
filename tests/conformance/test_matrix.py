"""``toolconf matrix``: statuses, merging, the Markdown page, and the HTML page in Chromium.

The HTML test drives Debian's headless Chromium through chromedriver
(selenium): the page renders its rows, a clicked cell lists its scenarios,
and the browser logs no error. Without Chromium it skips, saying so;
``.ci/run`` installs it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conformance.analysis.matrix import build_matrix, load_reports, matrix_markdown, scenario_status
from conformance.cli import main
from conformance.suite.spec import Spec

SPEC = """# Spec

## 12. Read

- **READ-A-1** (MUST) a.

## 13. Write

- **WRITE-B-1** (MUST) b.
"""

LEVELS_PASS = {"behaviour": {"verdict": "pass"}, "identity": {"verdict": "none"}}
LEVELS_UNOBSERVED = {"behaviour": {"verdict": "not_observed"}, "identity": {"verdict": "none"}}


def _report(path: Path, impl: str, version: str, results: list[dict[str, Any]]) -> Path:
    header = {
        "type": "header",
        "impl": impl,
        "implementation": {"name": impl.split(":", maxsplit=1)[0], "version": version},
        "started": "2026-12-02T00:00:00+00:00",
    }
    lines = [header] + [{"type": "result", "duration": 1.0, **r} for r in results]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _result(sid: str, outcome: str, spec: list[str], **more: Any) -> dict[str, Any]:
    return {"id": sid, "outcome": outcome, "spec": spec, **more}


def _reports(tmp: Path) -> list[Path]:
    return [
        _report(
            tmp / "a.jsonl",
            "direct",
            "0.1.0",
            [
                _result("r1", "pass", ["READ-A-1"], levels=LEVELS_PASS),
                _result("w1", "fail", ["WRITE-B-1"], message="step 1: is_error </script>"),
                _result("both", "pass", ["READ-A-1", "WRITE-B-1"], levels=LEVELS_UNOBSERVED),
            ],
        ),
        _report(
            tmp / "b1.jsonl",
            "mcp:peer",
            "2",
            [_result("r1", "not_applicable", ["READ-A-1"], reason="requires read")],
        ),
        _report(
            tmp / "b2.jsonl",
            "mcp:peer",
            "2",
            [_result("w1", "timeout", ["WRITE-B-1"]), _result("r1", "xfail", ["READ-A-1"])],
        ),
    ]


def test_statuses_sections_and_merged_runs(tmp_path: Path) -> None:
    """One row per implementation (parts merged), one column per section, four statuses."""
    assert scenario_status({"outcome": "xfail", "raw_outcome": "fail"}) == "fail"
    assert scenario_status({"outcome": "pass", "levels": LEVELS_UNOBSERVED}) == "not observed"
    matrix = build_matrix(load_reports(_reports(tmp_path)), Spec(SPEC))
    assert matrix.sections == ["12. Read", "13. Write"]
    direct, peer = matrix.rows
    assert [direct.cells[s].verdict for s in matrix.sections] == ["pass", "fail"]
    assert direct.cells["12. Read"].count("not observed") == 1
    assert (direct.total("pass"), direct.total("fail"), direct.total("not observed")) == (1, 1, 1)
    # the second part's r1 replaced the first's: xfail is a failure in the matrix
    assert [e.status for e in peer.cells["12. Read"].entries] == ["fail"]
    assert peer.cells["13. Write"].entries[0].outcome == "timeout"
    page = matrix_markdown(matrix, date="2026-12-02", command="toolconf matrix a b")
    assert '<a id="cell-0-1"></a>' in page
    assert "[1 pass, 1 not observed](#cell-0-0)" in page
    assert "| `w1` | fail | fail | WRITE-B-1 |" in page


def _chromium() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip(
            "LOUD SKIP: Chromium or chromedriver is not installed, the matrix page is not "
            "checked in a browser (Debian: apt-get install chromium chromium-driver)"
        )
    return browser, driver


@pytest.mark.browser
@pytest.mark.slow
def test_the_html_page_renders_and_drills_down_in_chromium(tmp_path: Path) -> None:
    """A real headless Chromium: rows render, a click lists the cell's scenarios, no errors."""
    browser, driver_path = _chromium()
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service  # noqa: PLC0415  (after the skip)
    from selenium.webdriver.common.by import By  # noqa: PLC0415

    out = tmp_path / "out"
    assert (
        main(
            [
                "matrix",
                *map(str, _reports(tmp_path)),
                "--spec",
                _spec(tmp_path),
                "--output-dir",
                str(out),
            ]
        )
        == 0
    )
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    profile = tempfile.mkdtemp(prefix="toolconf-chromium-", dir=tmp_path)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        chrome.get((out / "matrix.html").as_uri())
        rows = chrome.find_elements(By.CSS_SELECTOR, "#matrix tr")
        assert len(rows) == 3  # the header and two implementations
        cells = chrome.find_elements(By.CSS_SELECTOR, "#matrix td.cell")
        assert [c.get_attribute("class") for c in cells] == [
            "cell pass",
            "cell fail",
            "cell fail",
            "cell fail",
        ]
        cells[1].click()  # the reference's Write column
        detail = chrome.find_element(By.ID, "detail-table")
        text = detail.text
        assert "w1" in text
        assert "both" in text
        assert "WRITE-B-1" in text
        assert "</script>" in text  # a message is text, not markup
        assert "r1" not in text
        title = chrome.find_element(By.CSS_SELECTOR, "#detail h2").text
        assert title.endswith(": 13. Write")
        errors = [e for e in chrome.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == []
    finally:
        chrome.quit()


def _spec(tmp: Path) -> str:
    path = tmp / "SPEC.md"
    path.write_text(SPEC)
    return str(path)
