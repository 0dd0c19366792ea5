"""``toolconf bench --costs``: what each implementation's model receives, measured and reported.

Against the reference in process, the fake adapter and a small agent double
(a Python program speaking Chat Completions, written here, not any real
CLI) that wraps each result in a JSON record inside a list of parts, as an
agent may: the bench must count what the model received, not the
connector's reading of it.
"""

from __future__ import annotations

import io
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from conformance.cli import main
from conformance.errors import ConformanceError
from conformance.instruments.bench import costs, costs_report
from conformance.instruments.bench.costs import FileSpec
from conformance.instruments.bench.measure import DEDUP_OFF
from conformance.instruments.bench.run import TraceSummary
from conformance.instruments.bench.session import BenchSession, count_tokens
from conformance.instruments.bench.trace import Trace, make_trace
from conformance.peers.agent.adapter import AgentAdapter
from conformance.peers.agent.connector import FAILURES
from conformance.peers.agent.definition import AgentDefinition
from conformance.peers.agent.install import InstalledAgent
from conformance.peers.agent.model_api.dialect import carried_text
from conformance.peers.inprocess import InProcessConnector
from conformance.peers.registry import connect
from conformance.wire.connector import ConnectorOptions

SMALL_FILES = (
    FileSpec("text-300k.py", "300 KiB text", 300 << 10, "text"),
    FileSpec("one-line.min.js", "8 KiB minified (one line)", 8 << 10, "minified"),
    FileSpec("blob.bin", "4 KiB binary", 4 << 10, "binary"),
)


def _tree() -> dict[str, str]:
    """A small tree: twelve modules of generated code, two of them long enough for ranges."""
    from conformance.instruments.bench import corpus  # noqa: PLC0415

    return {
        f"pkg/m{index}.py": corpus.generate("source", 40_000 if index < 2 else 3_000, seed=index)
        for index in range(12)
    }


@pytest.fixture(scope="module")
def trace() -> Trace:
    return make_trace(_tree(), reads=40, reread_share=0.4, after_edit_share=0.3, seed=3)


def _quiet(_line: str) -> None:
    pass


# -- the files: contents and what the model received ------------------------------


def test_the_files_are_the_same_every_time_and_share_their_head() -> None:
    text = [spec for spec in costs.FILES if spec.kind == "text"]
    small, large = costs.file_bytes(text[0]), costs.file_bytes(text[1])
    assert [len(costs.file_bytes(spec)) for spec in costs.FILES if spec.size < 8 << 20] == [
        spec.size for spec in costs.FILES if spec.size < 8 << 20
    ]
    assert large.startswith(small[:100_000])
    minified = costs.file_bytes(costs.FILES[3])
    assert b"\n" not in minified
    assert costs.text_tokens(costs.file_bytes(costs.FILES[4])) is None  # binary
    assert costs.file_bytes(costs.FILES[4]) == costs.file_bytes(costs.FILES[4])


def test_the_largest_text_repeats_its_chunk_to_the_exact_size() -> None:
    spec = FileSpec("big.py", "3 MiB", 3 << 20, "text")
    data = costs.file_bytes(spec)
    assert len(data) == 3 << 20
    assert data[costs.REPEATED_CHUNK :].startswith(data[:1000])


def test_an_edit_changes_one_line_found_once() -> None:
    text = "x = 1\nx = 1\nvalue = compute(items)\n"
    old, new = costs.edit_of(text)
    assert (old, text.count(old)) == ("value = compute(items)", 1)
    assert new.startswith(old)
    assert new != old
    with pytest.raises(ConformanceError, match="exactly once"):
        costs.edit_of("short\nshort\n")


# -- the reference: every part measured --------------------------------------------


@pytest.fixture(scope="module")
def reference_run(trace: Trace) -> costs.CostsRun:
    return costs.costs([("reference", "direct")], trace, files=SMALL_FILES, say=_quiet)


def test_the_reference_refuses_what_it_must_and_shows_the_rest(
    reference_run: costs.CostsRun,
) -> None:
    (impl,) = reference_run.implementations
    assert impl.failure is None
    assert impl.notes == {}
    reads = {read.name: read.answer for read in impl.files}
    text, minified, binary = (reads[spec.name] for spec in SMALL_FILES)
    assert text is not None
    assert minified is not None
    assert binary is not None
    assert text.is_error
    assert "exceeds maximum allowed size" in text.begins
    assert not minified.is_error
    assert minified.tokens > 100
    assert binary.is_error
    assert "binary" in binary.begins
    assert all(a.ratio is not None and a.ratio > 0 for a in reads.values() if a is not None)
    assert impl.tiny is not None
    assert impl.tiny.tokens >= reference_run.tiny_tokens


def test_a_reread_after_an_edit_is_the_whole_file_again(reference_run: costs.CostsRun) -> None:
    reread = reference_run.implementations[0].reread
    assert reread is not None
    assert reread.note is None
    assert reread.first is not None
    assert reread.edit is not None
    assert reread.reread is not None
    assert not reread.reread.dedup  # READ-DEDUP-3
    assert reread.reread.tokens >= reread.first.tokens
    assert reread.edit.tokens < 100
    assert reread.edit.begins.startswith("The file ROOT/edited.py ")  # the sandbox root, hidden
    assert reread.edit.bytes > len(reread.edit.begins.encode("utf-8"))  # counted as sent


def test_the_trace_counts_what_dedup_saved(reference_run: costs.CostsRun, trace: Trace) -> None:
    measured = reference_run.implementations[0].trace
    assert measured is not None
    assert (measured.reads, measured.edits) == (len(trace.reads), len(trace.steps) - 40)
    assert measured.stubs == trace.count("reread")
    assert measured.failed_reads == measured.failed_edits == 0
    assert sum(measured.tokens_by_kind.values()) == measured.tokens
    assert 0 < measured.saved_share < 1


def _replay(session: BenchSession, trace: Trace, tree: Path, *, dedup: bool) -> costs.TraceCosts:
    session.begin({} if dedup else DEDUP_OFF)
    try:
        return costs.trace_costs(session, trace, tree, tiny=None)
    finally:
        session.end()


def test_the_saving_read_from_one_run_is_what_turning_dedup_off_costs(
    trace: Trace, tmp_path: Path
) -> None:
    """Each stub stands in for the same range's last answer: exactly what dedup off returns."""
    connector = connect("direct")
    connector.start()
    try:
        (tmp_path / "s").mkdir()
        session = BenchSession(connector, tmp_path, tmp_path / "s")
        trace.materialize(tmp_path / "on")
        trace.materialize(tmp_path / "off")
        on = _replay(session, trace, tmp_path / "on", dedup=True)
        off = _replay(session, trace, tmp_path / "off", dedup=False)
    finally:
        connector.close()
    assert on.stubs > 0
    assert off.stubs == 0
    assert on.saved_tokens == off.tokens - on.tokens
    assert on.saved_bytes == off.bytes - on.bytes


# -- the report ------------------------------------------------------------------


def test_the_json_report_reads_back_as_the_same_run(reference_run: costs.CostsRun) -> None:
    assert costs_report.from_json(costs_report.to_json(reference_run)) == reference_run
    with pytest.raises(ConformanceError, match="not a toolconf bench --costs JSON report"):
        costs_report.from_json('{"started": "x"}')


def test_runs_merge_in_order_a_later_label_replacing_an_earlier(
    reference_run: costs.CostsRun,
) -> None:
    (impl,) = reference_run.implementations
    other = costs_report.from_json(costs_report.to_json(reference_run))
    other.implementations = [
        costs.ImplementationCosts(label="other", spec="x", failure="AdapterCrash: gone"),
        costs.ImplementationCosts(label="reference", spec="again", name=impl.name),
    ]
    merged = costs.merged([reference_run, other])
    assert [(i.label, i.spec) for i in merged.implementations] == [
        ("reference", "again"),
        ("other", "x"),
    ]
    other.trace = TraceSummary(1, 1, 1, 0, 0, 0, 0, 0, 0)
    with pytest.raises(ConformanceError, match="another trace"):
        costs.merged([reference_run, other])
    with pytest.raises(ConformanceError, match="no costs run"):
        costs.merged([])


def test_the_markdown_and_the_plot(reference_run: costs.CostsRun) -> None:
    run = costs_report.from_json(costs_report.to_json(reference_run))
    run.implementations.append(
        costs.ImplementationCosts(
            label="toolless",
            spec="agent:x",
            files=[
                costs.FileRead(spec.name, None, "not applicable: no Read") for spec in SMALL_FILES
            ],
            reread=costs.RereadAfterEdit(None, None, None, "not applicable: no Read"),
            notes={"trace": "not applicable: no Read"},
        )
    )
    markdown = costs_report.to_markdown(run, regenerate="make costs")
    assert "`reference/tokens.py`" in markdown  # the counter is named
    assert "Regenerate: `make costs`." in markdown
    glance = next(line for line in markdown.splitlines() if line.startswith("| **toolless**"))
    assert glance.count("n/a") == len(SMALL_FILES) + 3
    reference_row = next(
        line for line in markdown.splitlines() if line.startswith("| **reference**")
    )
    assert "(error)" in reference_row  # the 300 KiB text, refused
    assert "- **toolless**, trace: not applicable: no Read" in markdown
    with Image.open(io.BytesIO(costs_report.to_png(run))) as image:
        assert (image.format, image.size) == ("PNG", (1000, 620))


# -- an agent: the text its model received, not the connector's reading ---------------

DOUBLE = textwrap.dedent(
    """
    import json, os, sys, urllib.request
    base = sys.argv[1]
    def tool(name, *keys):
        properties = {key: {"type": "string"} for key in keys}
        return {"type": "function", "function": {"name": name, "parameters": {
            "type": "object", "properties": properties}}}
    tools = [tool("read_file", "path"), tool("edit_file", "path", "old", "new")]
    def run(name, arguments):
        path = arguments["path"]
        query = os.path.basename(path)  # the record's length the same in any sandbox
        try:
            text = open(path).read()
            if "offset" in arguments:
                start = arguments["offset"] - 1
                text = "".join(text.splitlines(True)[start:start + arguments["limit"]])
            if name == "edit_file":
                if text.count(arguments["old"]) != 1:
                    return {"query": query, "result": "", "error": "no match", "success": False}
                open(path, "w").write(text.replace(arguments["old"], arguments["new"]))
                text = "edited " + query
            return {"query": query, "result": text, "success": True}
        except (OSError, UnicodeDecodeError) as exc:
            return {"query": query, "result": "", "error": str(exc), "success": False}
    messages = [{"role": "user", "content": "go"}]
    while True:
        body = json.dumps({"model": "m", "messages": messages, "tools": tools}).encode()
        request = urllib.request.Request(base + "/v1/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        message = json.loads(urllib.request.urlopen(request, timeout=60).read())
        message = message["choices"][0]["message"]
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            record = run(call["function"]["name"], json.loads(call["function"]["arguments"]))
            parts = [{"type": "text", "text": json.dumps(record)}]
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": parts})
    """
)


def _double(tmp_path: Path, *, reads: bool = True) -> InProcessConnector:
    """The double behind the agent connector's adapter; without ``reads`` it plays Edit alone."""
    program = tmp_path / "double.py"
    program.write_text(DOUBLE)
    agent = InstalledAgent(directory=tmp_path, program=program, package=tmp_path)
    record = {
        "format": "json_record",
        "text_key": "result",
        "error_key": "error",
        "ok_key": "success",
    }
    edit = {"path": "$file_path", "old": "$old_string", "new": "$new_string"}
    tools: dict[str, object] = {
        "Edit": {"tool": "edit_file", "input": edit, "result": record},
    }
    if reads:
        read = {"path": "$file_path", "offset": "$offset", "limit": "$limit"}
        tools["Read"] = {"tool": "read_file", "input": read, "result": record}
    definition = AgentDefinition.model_validate(
        {
            "name": "double",
            "implementation": {"name": "double", "version": "1.0.0", "language": "python"},
            "install": {"npm": "double", "version": "1.0.0", "program": "double.py"},
            "launch": {
                "argv": [sys.executable, "-I", "{program}", "{base_url}"],
                "start_timeout": 30,
                "turn_timeout": 10,
                "exit_grace": 5,
            },
            "model_api": {"dialect": "openai_chat", "model": "m"},
            "tools": tools,
            "features": ["read", "edit"] if reads else ["edit"],
            "unreported": ["stage", "error_code", "error_name", "dedup", "output", "batches"],
        }
    )
    return InProcessConnector(
        "agent:double",
        ConnectorOptions(timeout=10),
        lambda: AgentAdapter(definition, agent, turn_timeout=10, isolate=False),
        FAILURES,
        label="double",
    )


def test_the_list_of_parts_an_agent_sent_is_carried_whole() -> None:
    parts = [{"type": "text", "text": "a\n"}, {"type": "text", "text": "b"}, {"type": "x"}]
    assert carried_text(parts, frozenset({"text"})) == 'a\nb{"type":"x"}'
    assert carried_text("plain", frozenset({"text"})) is None


@pytest.mark.subprocess
def test_an_agents_result_is_counted_as_its_model_received_it(trace: Trace, tmp_path: Path) -> None:
    """The JSON record in its list of parts, byte for byte, not the record's result text."""
    made = costs.materials(SMALL_FILES)
    impl = costs.measure_costs(
        "double", _double(tmp_path), spec="agent:double", trace=trace, made=made, say=_quiet
    )
    assert impl.failure is None, impl.failure
    reads = {read.name: read.answer for read in impl.files}
    text = reads["text-300k.py"]
    assert text is not None
    assert not text.is_error
    found = re.match(r'\{"query": "([^"]+)"', text.begins)
    assert found is not None
    whole = costs.file_bytes(SMALL_FILES[0]).decode("utf-8")
    shown = json.dumps({"query": found[1], "result": whole, "success": True})
    assert (text.bytes, text.tokens) == (len(shown.encode("utf-8")), count_tokens(shown))
    binary = reads["blob.bin"]
    assert binary is not None
    assert binary.is_error
    assert impl.trace is not None
    assert impl.trace.reads == len(trace.reads)
    assert (impl.trace.stubs, impl.trace.saved_tokens) == (0, 0)  # no dedup, nothing saved
    assert impl.trace.edits > 0
    assert impl.trace.failed_edits == 0
    assert impl.reread is not None
    assert impl.reread.edit is not None
    assert impl.reread.edit.begins.startswith('{"query": ')


@pytest.mark.subprocess
def test_an_implementation_without_the_tool_is_not_applicable_never_emulated(
    trace: Trace, tmp_path: Path
) -> None:
    made = costs.materials(SMALL_FILES)
    connector = _double(tmp_path, reads=False)
    impl = costs.measure_costs(
        "toolless", connector, spec="agent:double", trace=trace, made=made, say=_quiet
    )
    assert impl.failure is None
    assert impl.tiny is None
    assert all(read.answer is None for read in impl.files)
    assert all((read.note or "").startswith("not applicable: ") for read in impl.files)
    assert impl.reread is not None
    assert (impl.reread.note or "").startswith("not applicable")
    assert impl.notes["trace"].startswith("not applicable: ")


# -- the command line ----------------------------------------------------------------


def test_saved_reports_are_merged_and_rendered_without_measuring(
    reference_run: costs.CostsRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(costs_report.to_json(reference_run), encoding="utf-8")
    later = costs_report.from_json(costs_report.to_json(reference_run))
    later.implementations[0].label = "again"
    second.write_text(costs_report.to_json(later), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["bench", "--costs", "--from", str(first), "--from", str(second)]
    argv += ["--regenerate", "make costs", "--report", f"json={out}/costs.json"]
    argv += ["--report", f"markdown={out}/costs.md", "--report", f"png={out}/costs.png"]
    assert main(argv) == 0
    merged = costs_report.from_json((out / "costs.json").read_text(encoding="utf-8"))
    assert [impl.label for impl in merged.implementations] == ["reference", "again"]
    markdown = (out / "costs.md").read_text(encoding="utf-8")
    assert "| **again** |" in markdown
    assert "Regenerate: `make costs`." in markdown
    assert (out / "costs.png").read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()


@pytest.mark.parametrize(
    "argv",
    [["--from", "x.json"], ["--tree", "."], ["--regenerate", "x"]],
    ids=["from", "tree", "regenerate"],
)
def test_the_costs_options_need_costs(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", *argv]) == 2
    assert "go with --costs" in capsys.readouterr().err


def test_an_unreadable_saved_report_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    assert main(["bench", "--costs", "--from", str(bad)]) == 2
    assert main(["bench", "--costs", "--from", str(tmp_path / "missing.json")]) == 2
    capsys.readouterr()


def test_a_line_drawn_over_another_says_so(reference_run: costs.CostsRun) -> None:
    run = costs_report.from_json(costs_report.to_json(reference_run))
    twin = costs_report.from_json(costs_report.to_json(reference_run)).implementations[0]
    twin.label = "twin"
    toolless = costs.ImplementationCosts(
        label="toolless", spec="agent:x", notes={"trace": "not applicable: no Read"}
    )
    run.implementations += [twin, toolless]
    labels = [series.label for series in costs_report.plot_series(run)]
    assert labels == [
        "reference",
        "twin (over reference)",
        "toolless: no Read tool",
        "the file itself, whole",
    ]
    assert costs_report.glance_table(run)[2].startswith("| *the file itself* |")
