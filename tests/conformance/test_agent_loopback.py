"""The loopback-only namespace: the model is reachable, nothing else, and every try is recorded."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.peers.agent.loopback import loopback_available, read_escapes, wrap_loopback
from conformance.peers.agent.model_api import ScriptedModel, dialect

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(
        not loopback_available(), reason="no network namespaces here (Linux, unshare)"
    ),
]

CLIENT = textwrap.dedent(
    """
    import json, socket, sys, urllib.request
    port = int(sys.argv[1])
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", data=body, method="POST",
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        print(json.loads(response.read())["choices"][0]["message"]["content"])
    for host, where in (("203.0.113.9", 443), ("2001:db8::1", 80)):
        try:
            socket.create_connection((host, where), timeout=5)
        except OSError as exc:
            print("refused", host, type(exc).__name__)
    try:
        socket.getaddrinfo("registry.npmjs.org", 443)
    except OSError:
        print("no lookup")
    """
)


def test_only_the_relayed_model_answers_and_escapes_are_recorded(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir()
    model = ScriptedModel(
        dialect("openai_chat"), side_text="hello from outside", unix_path=private / "m.sock"
    ).start()
    script = private / "client.py"
    script.write_text(CLIENT)
    record = private / "escapes.jsonl"
    try:
        argv = wrap_loopback(
            [sys.executable, "-I", str(script), "43117"],
            private,
            port=43117,
            unix_path=private / "m.sock",
            record=record,
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    finally:
        model.close()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "hello from outside"
    assert "refused 203.0.113.9 ConnectionRefusedError" in lines
    assert "refused 2001:db8::1 ConnectionRefusedError" in lines
    assert "no lookup" in lines
    escapes = {str(e) for e in read_escapes(record)}
    assert "tcp 203.0.113.9:443" in escapes
    assert "tcp 2001:db8::1:80" in escapes
    assert any(e.startswith("dns registry.npmjs.org") for e in escapes)
    assert not any("43117" in e for e in escapes)  # the model's port is loopback, not an escape
    assert all(json.loads(line) for line in record.read_text().splitlines())
