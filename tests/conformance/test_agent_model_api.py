"""The scripted model API in each of its four dialects, driven by a real HTTP client.

Each request here has the shape the dialect's clients send (written for
these tests, not captured from any agent): the main-loop request offering
tools gets the scripted turn, streamed as the dialect streams; the next
request's tool results come back to the caller; side requests get a short
text without using a turn; and every bound holds.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.peers.agent.model_api import (
    DIALECTS,
    MainRequest,
    ScriptedModel,
    ToolCall,
    Turn,
    dialect,
)

READ_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
}


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[ScriptedModel] = []

    def start(name: str, **options: Any) -> ScriptedModel:
        model = ScriptedModel(dialect(name), **options).start()
        started.append(model)
        return model

    yield start
    for model in started:
        model.close()


def post(
    url: str,
    body: Mapping[str, Any] | bytes,
    *,
    timeout: float = 10.0,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def sse(raw: bytes) -> list[tuple[str | None, Any]]:
    """The (event name, parsed data) of each server-sent event; ``[DONE]`` stays a string."""
    events: list[tuple[str | None, Any]] = []
    for frame in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        if not frame.strip():
            continue
        name = None
        data: list[str] = []
        for line in frame.decode().split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        text = "\n".join(data)
        events.append((name, text if text == "[DONE]" else json.loads(text)))
    return events


def answer_next(model: ScriptedModel, turn: Turn, seen: list[MainRequest]) -> threading.Thread:
    """A thread that takes the next main-loop request, keeps it and answers ``turn``."""

    def run() -> None:
        request = model.next_request(10.0)
        if request is not None:
            seen.append(request)
            request.answer(turn)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


TWO_CALLS = Turn(
    calls=[
        ToolCall("call_1", "read_file", {"path": "/s/a.txt"}),
        ToolCall("call_2", "read_file", {"path": "/s/b.txt"}),
    ],
    text="Reading.",
)


# -- Anthropic Messages ---------------------------------------------------------


def anthropic_body(stream: bool, messages: list[Any] | None = None) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": stream,
        "system": [{"type": "text", "text": "You are a coding agent."}],
        "tools": [{"name": "read_file", "description": "Read.", "input_schema": READ_SCHEMA}],
        "messages": messages or [{"role": "user", "content": "Run the tool calls."}],
    }


def test_anthropic_streams_tool_use_blocks(serve: Any) -> None:
    model = serve("anthropic_messages")
    seen: list[MainRequest] = []
    thread = answer_next(model, TWO_CALLS, seen)
    status, raw = post(f"{model.base_url}/v1/messages?beta=true", anthropic_body(True))
    thread.join(5)
    assert status == 200
    events = sse(raw)
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    uses = [data["content_block"] for name, data in events if name == "content_block_start"]
    assert [u["type"] for u in uses] == ["text", "tool_use", "tool_use"]
    assert [u.get("id") for u in uses[1:]] == ["call_1", "call_2"]
    inputs = [
        json.loads(data["delta"]["partial_json"])
        for name, data in events
        if name == "content_block_delta" and data["delta"]["type"] == "input_json_delta"
    ]
    assert inputs == [{"path": "/s/a.txt"}, {"path": "/s/b.txt"}]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert [t.name for t in seen[0].tools] == ["read_file"]
    assert seen[0].tools[0].schema == READ_SCHEMA


def test_anthropic_hands_back_tool_results_with_error_flag(serve: Any) -> None:
    model = serve("anthropic_messages")
    seen: list[MainRequest] = []
    thread = answer_next(model, Turn(text="Done."), seen)
    messages = [
        {"role": "user", "content": "Run the tool calls."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "r"}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "a\nb"},
                {
                    "type": "tool_result",
                    "tool_use_id": "call_2",
                    "content": [{"type": "text", "text": "<tool_use_error>no</tool_use_error>"}],
                    "is_error": True,
                },
            ],
        },
    ]
    status, raw = post(f"{model.base_url}/v1/messages", anthropic_body(False, messages))
    thread.join(5)
    assert status == 200
    reply = json.loads(raw)
    assert reply["stop_reason"] == "end_turn"
    assert reply["content"][0]["text"] == "Done."
    found = seen[0].results_for([("call_1", "r"), ("call_2", "r")])
    assert (found["call_1"].text, found["call_1"].is_error) == ("a\nb", False)
    assert (found["call_2"].text, found["call_2"].is_error) == (
        "<tool_use_error>no</tool_use_error>",
        True,
    )


def test_anthropic_counts_tokens(serve: Any) -> None:
    model = serve("anthropic_messages")
    body = {"messages": [{"role": "user", "content": "hello world"}]}
    status, raw = post(f"{model.base_url}/v1/messages/count_tokens", body)
    assert status == 200
    assert json.loads(raw) == {"input_tokens": 2}


# -- OpenAI Chat Completions ---------------------------------------------------------


def chat_body(stream: bool, messages: list[Any] | None = None) -> dict[str, Any]:
    return {
        "model": "fake-model",
        "stream": stream,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read.",
                    "parameters": READ_SCHEMA,
                },
            }
        ],
        "messages": messages
        or [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Run the tool calls."},
        ],
    }


def test_chat_streams_tool_call_deltas(serve: Any) -> None:
    model = serve("openai_chat")
    seen: list[MainRequest] = []
    thread = answer_next(model, TWO_CALLS, seen)
    status, raw = post(f"{model.base_url}/v1/chat/completions", chat_body(True))
    thread.join(5)
    assert status == 200
    events = sse(raw)
    assert events[-1] == (None, "[DONE]")
    chunks = [data for _, data in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    calls: dict[int, dict[str, str]] = {}
    text = ""
    finish = None
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            text += delta.get("content") or ""
            for part in delta.get("tool_calls", []):
                entry = calls.setdefault(part["index"], {"id": "", "name": "", "arguments": ""})
                entry["id"] += part.get("id", "")
                entry["name"] += part.get("function", {}).get("name", "")
                entry["arguments"] += part.get("function", {}).get("arguments", "")
            finish = choice["finish_reason"] or finish
    assert text == "Reading."
    assert finish == "tool_calls"
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in calls.values()] == [
        ("call_1", "read_file", {"path": "/s/a.txt"}),
        ("call_2", "read_file", {"path": "/s/b.txt"}),
    ]
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["total_tokens"] == 2
    assert seen[0].tools[0].name == "read_file"


def test_chat_hands_back_tool_messages_without_error_flag(serve: Any) -> None:
    model = serve("openai_chat")
    seen: list[MainRequest] = []
    thread = answer_next(model, Turn(text="Done."), seen)
    messages = [
        {"role": "user", "content": "Run the tool calls."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "r", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Error: file not read"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "x"}]},
    ]
    status, raw = post(f"{model.base_url}/v1/chat/completions", chat_body(False, messages))
    thread.join(5)
    reply = json.loads(raw)
    assert status == 200
    assert reply["choices"][0]["finish_reason"] == "stop"
    assert reply["choices"][0]["message"]["content"] == "Done."
    found = seen[0].results_for([("call_1", "r"), ("call_2", "r")])
    assert (found["call_1"].text, found["call_1"].is_error) == ("Error: file not read", None)
    assert found["call_2"].text == "x"
    assert found["call_1"].group == found["call_2"].group


def test_chat_lists_models(serve: Any) -> None:
    model = serve("openai_chat", model="fake-model")
    with urllib.request.urlopen(f"{model.base_url}/v1/models", timeout=5) as response:
        listing = json.loads(response.read())
    assert [entry["id"] for entry in listing["data"]] == ["fake-model"]


# -- OpenAI Responses -------------------------------------------------------------


PATCH = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"


def responses_body(stream: bool, items: list[Any] | None = None) -> dict[str, Any]:
    return {
        "model": "gpt-5.5",
        "instructions": "You are a coding agent.",
        "stream": stream,
        "tools": [
            {
                "type": "function",
                "name": "exec_command",
                "description": "Run.",
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
                "strict": False,
            },
            {
                "type": "custom",
                "name": "apply_patch",
                "description": "Patch.",
                "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"},
            },
            {"type": "web_search"},
        ],
        "input": items
        or [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Run the tool calls."}],
            }
        ],
    }


def test_responses_streams_function_and_custom_calls(serve: Any) -> None:
    model = serve("openai_responses")
    seen: list[MainRequest] = []
    turn = Turn(
        calls=[
            ToolCall("call_1", "exec_command", {"cmd": "cat a.txt"}),
            ToolCall("call_2", "apply_patch", PATCH, kind="custom"),
        ]
    )
    thread = answer_next(model, turn, seen)
    status, raw = post(f"{model.base_url}/v1/responses", responses_body(True))
    thread.join(5)
    assert status == 200
    events = sse(raw)
    names = [name for name, _ in events]
    assert names[:2] == ["response.created", "response.in_progress"]
    assert names[-1] == "response.completed"
    assert all(data["type"] == name for name, data in events)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    done = [data["item"] for name, data in events if name == "response.output_item.done"]
    assert [(i["type"], i["call_id"], i["name"]) for i in done] == [
        ("function_call", "call_1", "exec_command"),
        ("custom_tool_call", "call_2", "apply_patch"),
    ]
    assert json.loads(done[0]["arguments"]) == {"cmd": "cat a.txt"}
    assert done[1]["input"] == PATCH
    deltas = [data["delta"] for name, data in events if (name or "").endswith("input.delta")]
    assert deltas == [PATCH]
    completed = events[-1][1]["response"]
    assert completed["status"] == "completed"
    assert completed["output"] == done
    assert [(t.name, t.kind) for t in seen[0].tools] == [
        ("exec_command", "function"),
        ("apply_patch", "custom"),
        ("web_search", "other"),
    ]


def test_responses_hands_back_both_output_kinds(serve: Any) -> None:
    model = serve("openai_responses")
    seen: list[MainRequest] = []
    thread = answer_next(model, Turn(text="Done."), seen)
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]},
        {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{}"},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": PATCH},
        {"type": "function_call_output", "call_id": "call_1", "output": "x\n"},
        {
            "type": "custom_tool_call_output",
            "call_id": "call_2",
            "output": [{"type": "input_text", "text": "Success."}],
        },
    ]
    status, raw = post(f"{model.base_url}/v1/responses", responses_body(False, items))
    thread.join(5)
    assert status == 200
    reply = json.loads(raw)
    assert reply["output"][0]["content"][0]["text"] == "Done."
    found = seen[0].results_for([("call_1", "exec_command"), ("call_2", "apply_patch")])
    assert found["call_1"].text == "x\n"
    assert found["call_2"].text == "Success."
    assert found["call_1"].is_error is None


# -- Gemini -----------------------------------------------------------------


def gemini_body(contents: list[Any] | None = None) -> dict[str, Any]:
    return {
        "contents": contents or [{"role": "user", "parts": [{"text": "Run the tool calls."}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "You are a coding agent."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "read_file",
                        "description": "Read.",
                        "parametersJsonSchema": READ_SCHEMA,
                    }
                ]
            }
        ],
        "generationConfig": {"temperature": 0},
    }


def test_gemini_streams_function_calls_as_sse(serve: Any) -> None:
    model = serve("gemini")
    seen: list[MainRequest] = []
    thread = answer_next(model, TWO_CALLS, seen)
    url = f"{model.base_url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    status, raw = post(url, gemini_body())
    thread.join(5)
    assert status == 200
    assert b"\r\n\r\n" in raw
    chunks = [data for _, data in sse(raw)]
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert parts[0] == {"text": "Reading."}
    assert [p["functionCall"] for p in parts[1:]] == [
        {"name": "read_file", "args": {"path": "/s/a.txt"}, "id": "call_1"},
        {"name": "read_file", "args": {"path": "/s/b.txt"}, "id": "call_2"},
    ]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "finishReason" not in chunks[0]["candidates"][0]
    assert seen[0].tools[0].schema == READ_SCHEMA


def test_gemini_matches_results_without_ids_by_order_and_reads_error(serve: Any) -> None:
    model = serve("gemini")
    seen: list[MainRequest] = []
    thread = answer_next(model, Turn(text="Done."), seen)
    contents = [
        {"role": "user", "parts": [{"text": "Go."}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}}]},
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read_file", "response": {"output": "a"}}},
                {"functionResponse": {"name": "read_file", "response": {"error": "no such"}}},
            ],
        },
    ]
    status, raw = post(
        f"{model.base_url}/v1beta/models/gemini-2.5-pro:generateContent", gemini_body(contents)
    )
    thread.join(5)
    assert status == 200
    assert json.loads(raw)["candidates"][0]["content"]["parts"] == [{"text": "Done."}]
    found = seen[0].results_for([("call_1", "read_file"), ("call_2", "read_file")])
    assert (found["call_1"].text, found["call_1"].is_error) == ("a", False)
    assert (found["call_2"].text, found["call_2"].is_error) == ("no such", True)


def test_gemini_counts_tokens_and_answers_json_side_requests(serve: Any) -> None:
    model = serve("gemini")
    url = f"{model.base_url}/v1beta/models/gemini-2.5-pro"
    status, raw = post(f"{url}:countTokens", {"contents": [{"parts": [{"text": "hello world"}]}]})
    assert status == 200
    assert json.loads(raw) == {"totalTokens": 2}
    side = {
        "contents": [{"role": "user", "parts": [{"text": "Who speaks next?"}]}],
        "generationConfig": {"responseMimeType": "application/json"},
    }
    status, raw = post(f"{url}:generateContent", side)
    assert json.loads(raw)["candidates"][0]["content"]["parts"] == [{"text": "{}"}]
    assert model.next_request(0.2) is None


# -- what every dialect shares ------------------------------------------------------


MAIN_BODIES = {
    "anthropic_messages": ("/v1/messages", anthropic_body(False)),
    "openai_chat": ("/v1/chat/completions", chat_body(False)),
    "openai_responses": ("/v1/responses", responses_body(False)),
    "gemini": ("/v1beta/models/m:generateContent", gemini_body()),
}


def test_every_dialect_has_a_main_body_here() -> None:
    assert set(MAIN_BODIES) == set(DIALECTS)


@pytest.mark.parametrize("name", sorted(MAIN_BODIES))
def test_side_requests_never_use_a_turn(serve: Any, name: str) -> None:
    model = serve(name, side_text="a title")
    path, body = MAIN_BODIES[name]
    side = {k: v for k, v in body.items() if k != "tools"}
    status, raw = post(model.base_url + path, side)
    assert status == 200
    assert b"a title" in raw
    assert model.next_request(0.2) is None
    assert model.main_count == 0
    assert len(model.side_requests) == 1


@pytest.mark.parametrize("name", sorted(MAIN_BODIES))
def test_main_requires_names_the_tools_of_the_main_loop(serve: Any, name: str) -> None:
    model = serve(name, main_requires=["some_other_tool"])
    path, body = MAIN_BODIES[name]
    status, _ = post(model.base_url + path, body)
    assert status == 200
    assert model.main_count == 0


@pytest.mark.parametrize("name", sorted(MAIN_BODIES))
def test_a_body_over_the_limit_is_refused(serve: Any, name: str) -> None:
    model = serve(name, max_body=1000)
    path, body = MAIN_BODIES[name]
    status, raw = post(model.base_url + path, {**body, "padding": "x" * 2000})
    assert status == 413
    assert b"at most 1000" in raw
    assert model.main_count == 0


@pytest.mark.parametrize("name", sorted(MAIN_BODIES))
def test_an_unanswered_request_gets_a_final_turn_after_the_hold(serve: Any, name: str) -> None:
    model = serve(name, hold=0.3)
    path, body = MAIN_BODIES[name]
    started = time.monotonic()
    status, raw = post(model.base_url + path, body)
    assert status == 200
    assert b"Done." in raw
    assert time.monotonic() - started < 5


def test_a_client_that_disconnects_is_never_handed_out(serve: Any) -> None:
    model = serve("openai_chat")
    path, body = MAIN_BODIES["openai_chat"]
    payload = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", model.port), timeout=5) as client:
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(payload)}\r\n\r\n"
        client.sendall(head.encode() + payload)
        deadline = time.monotonic() + 5
        while model.main_count == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
    assert model.main_count == 1
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if model.next_request(0.2) is None:
            break
    assert model.next_request(0.5) is None


def test_a_slow_client_times_out_and_a_bad_body_is_refused(serve: Any) -> None:
    model = serve("openai_chat", read_timeout=0.3)
    with socket.create_connection(("127.0.0.1", model.port), timeout=5) as client:
        client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
        client.settimeout(5)
        assert client.recv(100) == b""  # the server hung up; nothing hangs
    status, raw = post(f"{model.base_url}/v1/chat/completions", b"[1, 2]")
    assert status == 400
    assert b"not a JSON object" in raw
    status, _ = post(f"{model.base_url}/v1/nothing", {})
    assert status == 404
    assert "POST /v1/nothing" in model.strays


def test_a_gzip_body_is_read_and_an_unknown_encoding_refused(serve: Any) -> None:
    import gzip  # noqa: PLC0415

    model = serve("openai_chat", side_text="plain")
    path, body = MAIN_BODIES["openai_chat"]
    side = {k: v for k, v in body.items() if k != "tools"}
    packed = gzip.compress(json.dumps(side).encode())
    status, raw = post(model.base_url + path, packed, headers={"Content-Encoding": "gzip"})
    assert status == 200
    assert b"plain" in raw
    status, _ = post(model.base_url + path, packed, headers={"Content-Encoding": "zstd"})
    assert status == 415


def test_a_chunked_body_is_read(serve: Any) -> None:
    model = serve("openai_chat", side_text="chunked")
    path, body = MAIN_BODIES["openai_chat"]
    payload = json.dumps({k: v for k, v in body.items() if k != "tools"}).encode()
    connection = http.client.HTTPConnection("127.0.0.1", model.port, timeout=5)
    connection.request("POST", path, body=iter([payload[:10], payload[10:]]), encode_chunked=True)
    response = connection.getresponse()
    assert response.status == 200
    assert b"chunked" in response.read()
    connection.close()


def test_the_unix_socket_serves_the_same_api(serve: Any, tmp_path: Path) -> None:
    serve("openai_chat", unix_path=tmp_path / "model.sock", side_text="over unix")
    path, body = MAIN_BODIES["openai_chat"]
    payload = json.dumps({k: v for k, v in body.items() if k != "tools"}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(str(tmp_path / "model.sock"))
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(payload)}\r\n"
        client.sendall(head.encode() + b"Connection: close\r\n\r\n" + payload)
        reply = b""
        with contextlib.suppress(TimeoutError):
            while chunk := client.recv(65536):
                reply += chunk
    assert reply.startswith(b"HTTP/1.1 200")
    assert b"over unix" in reply
