"""The HTML run report: the verdict first, the level figures, failures first grouped by area
and SPEC section and folded, a filter box, long tokens wrapped; checked in headless Chromium.

The browser test (marked ``browser``) loads the page at 1,400 px: it renders,
the filter narrows the scenarios and opens the groups that still hold one,
a 3,000-character token does not widen the page, and the browser logs no
error. Without Chromium it skips, saying so; ``.ci/run`` installs it.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from headless_browser import chromium_session, console_errors, page_width

from conformance.analysis.reports import RunInfo, write_report
from conformance.analysis.verdict import verdict_line
from conformance.run.results import LevelCount, Outcome, ScenarioResult
from conformance.suite.matchers import Mismatch

SECTIONS = {"WRITE-A-1": "13.2 Read before write", "EDIT-A-1": "14.1 Matching", "X-1": "3 Dispatch"}
LONG = "x" * 3000


def _result(sid: str, outcome: Outcome, area: str, spec: str, **more: object) -> ScenarioResult:
    levels = {
        "behaviour": LevelCount(passed=1) if outcome is Outcome.PASS else LevelCount(failed=1),
        "identity": LevelCount(passed=1),
        "rendering": LevelCount(),
    }
    return ScenarioResult(
        id=sid,
        outcome=outcome,
        title=f"title of {sid}",
        spec=(spec,),
        level="MUST",
        area=area,
        levels=levels,
        **more,  # type: ignore[arg-type]
    )


def _results() -> list[ScenarioResult]:
    return [
        _result("w-pass", Outcome.PASS, "write", "WRITE-A-1"),
        _result(
            "w-fail",
            Outcome.FAIL,
            "write",
            "WRITE-A-1",
            mismatches=(Mismatch(path="is_error", expected=True, actual=False, step=2),),
            message="step 2: is_error",
        ),
        _result("e-fail", Outcome.CRASH, "edit", "EDIT-A-1", message=f"adapter <b>died</b> {LONG}"),
        _result("d-na", Outcome.NOT_APPLICABLE, "dispatch", "X-1", reason="requires hooks"),
    ]


def _info() -> RunInfo:
    return RunInfo(
        impl="mutant:demo",
        implementation={"name": "reference-mutant", "version": "0.1.0"},
        features=("read", "write"),
        started="2026-12-04T00:00:00+00:00",
        sections=SECTIONS,
    )


def _page(results: list[ScenarioResult]) -> str:
    out = io.StringIO()
    write_report("html", results, _info(), out)
    return out.getvalue()


def test_the_verdict_comes_first_then_levels_then_failures_by_area_and_section() -> None:
    page = _page(_results())
    verdict = verdict_line(_results())
    assert verdict.startswith("FAILED: 2 of 4 scenarios did not pass")
    assert page.index(verdict) < page.index("<h2>Levels</h2>") < page.index("Not passing")
    assert page.index("Not passing") < page.index("Not applicable") < page.index(">Passing <")
    # areas in order, each folded, its sections named in the summary and as headings
    assert page.index('<span class="gtitle">edit</span>') < page.index(
        '<span class="gtitle">write</span>'
    )
    assert '<span class="gnote">13.2 Read before write 1</span>' in page
    assert "<h4>14.1 Matching" in page
    assert "<details open" not in page
    assert "adapter &lt;b&gt;died&lt;/b&gt;" in page  # details are text, not markup
    assert 'id="filter"' in page
    # behaviour held in 1 of the 2 scenarios judged (a crash is not judged by its checks)
    assert '<span class="pct">50%</span> <span class="frac">1/2</span>' in page


def test_a_run_without_failures_says_ok() -> None:
    page = _page([_result("w-pass", Outcome.PASS, "write", "WRITE-A-1")])
    assert '<p class="verdict ok" id="verdict">PASSED: the 1 scenario passed.</p>' in page
    assert "Not passing" not in page


@pytest.mark.browser
@pytest.mark.slow
def test_the_run_report_renders_filters_and_wraps_in_chromium(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By  # noqa: PLC0415

    page = tmp_path / "report.html"
    page.write_text(_page(_results()), encoding="utf-8")
    with chromium_session(tmp_path / "profile") as chrome:
        chrome.get(page.as_uri())
        first = chrome.find_element(By.CSS_SELECTOR, "body > *:nth-child(2)")
        assert first.get_attribute("id") == "verdict"
        assert first.text == verdict_line(_results())
        assert first.text.startswith("FAILED: 2 of 4 scenarios did not pass")
        groups = chrome.find_elements(By.CSS_SELECTOR, "details.group")
        assert all(g.get_attribute("open") is None for g in groups)  # folded
        chrome.find_element(By.ID, "filter").send_keys("e-fail")
        visible = [
            s.get_attribute("data-text").split()[0]
            for s in chrome.find_elements(By.CSS_SELECTOR, ".scenario")
            if s.is_displayed()
        ]
        assert visible == ["e-fail"]
        edit = next(g for g in groups if g.find_element(By.CSS_SELECTOR, ".gtitle").text == "edit")
        assert edit.get_attribute("open") == "true"  # opened: it holds a match
        assert "1 of 4 scenarios match" in chrome.find_element(By.ID, "shown").text
        chrome.find_element(By.CSS_SELECTOR, "details.scenario:not(.hidden) summary").click()
        shown = chrome.find_element(By.CSS_SELECTOR, "details.scenario:not(.hidden) pre")
        assert LONG[:50] in shown.text
        assert page_width(chrome) <= 1400  # the 3,000-character token wrapped
        chrome.find_element(By.ID, "filter").clear()
        chrome.execute_script("document.getElementById('filter').dispatchEvent(new Event('input'))")
        assert all(
            s.is_displayed() or not s.find_element(By.XPATH, "..").is_displayed()
            for s in chrome.find_elements(By.CSS_SELECTOR, ".scenario")
        )
        assert chrome.find_element(By.ID, "shown").text == ""
        assert console_errors(chrome) == []
