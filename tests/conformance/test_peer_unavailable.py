"""A peer that cannot be installed or run here ends the run with one line saying which and how
to fix it: no node, no npm, an unreachable registry, a release or a platform package the
registry does not have, an agent in the cache whose node is gone; never a crash per scenario.

The registry cases run npm against a registry of this test's own on the loopback (or a port
nothing listens on), never the real one.
"""

from __future__ import annotations

import http.server
import io
import json
import os
import shutil
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.errors import ImplementationUnavailable
from conformance.peers.agent import install
from conformance.peers.agent.definition import load_definition
from conformance.peers.agent.install import check_runnable
from conformance.peers.npm import PeerUnavailable, diagnose
from conformance.run.parallel import SessionPool
from conformance.run.results import ScenarioResult
from conformance.suite.registry import DEFAULT_SCENARIOS
from conformance.wire.protocol import Hello

Capture = pytest.CaptureFixture[str]
Patch = pytest.MonkeyPatch
SCENARIO = str(DEFAULT_SCENARIOS / "write" / "write-after-edit-needs-no-reread.yaml")
FAKE = "toolconf-fake-agent"
PLATFORM = f"{FAKE}-linux-x64"


# -- npm's failures, one line each ----------------------------------------------------


@pytest.mark.parametrize(
    ("output", "says"),
    [
        (
            "npm error code ECONNREFUSED\nnpm error FetchError: request to "
            "http://127.0.0.1:9/x failed, reason: connect ECONNREFUSED 127.0.0.1:9\n",
            "the npm registry http://127.0.0.1:9/ cannot be reached (ECONNREFUSED)",
        ),
        (
            "npm error code EAI_AGAIN\nnpm error request to https://registry.example/x failed\n",
            "npm config set registry URL",
        ),
        (
            "npm error code ETARGET\nnpm error notarget No matching version found for x@9.9.9.\n",
            "has no release x@9.9.9 (ETARGET): pin a release it has",
        ),
        (
            "npm error code ETARGET\nnpm error notarget No matching version found for x-linux@1.\n",
            "has no x-linux@1, which it depends on (ETARGET; a platform package",
        ),
        (
            "npm error code E404\nnpm error 404 Not Found - GET https://r.example/nope - Nope\n",
            "https://r.example/ has no such package (E404, https://r.example/nope)",
        ),
        ("npm error code EBADPLATFORM\n", "does not support this platform"),
        ("npm error code ENOSPC\n", "free space or fix the permissions of the cache"),
        (
            "npm error code EWEIRD\nnpm error something odd\nnpm error A complete log: /x.log\n",
            "failed with status 1 (EWEIRD): npm error something odd",
        ),
    ],
)
def test_each_npm_failure_is_one_line_saying_why(output: str, says: str) -> None:
    line = diagnose("npm install x@9.9.9", 1, output)
    assert says in line
    assert "\n" not in line


@pytest.mark.subprocess
def test_what_an_installed_agent_needs_to_run_is_checked_before_any_scenario(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PeerUnavailable, match="node is not on PATH"):
        check_runnable(load_definition("claude-code-2.1.88"), isolate=False)
    monkeypatch.setenv("PATH", _only("node", into=tmp_path / "bin"))
    monkeypatch.setattr(install, "find_path_tool", lambda name: None)
    if shutil.which("node") is not None:
        with pytest.raises(PeerUnavailable, match="gemini-cli needs rg on PATH"):
            check_runnable(load_definition("gemini-cli"), isolate=False)
    monkeypatch.setattr(install, "loopback_available", lambda: False)
    with pytest.raises(PeerUnavailable, match="--isolation off"):
        check_runnable(load_definition("codex"), isolate=True)


# -- a run ends with the line ---------------------------------------------------------


def _run(impl: str, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, list[str]]:
    status = main(["run", "--no-progress", "--impl", impl, *more, SCENARIO])
    err = capsys.readouterr().err
    return status, [line for line in err.splitlines() if line.startswith("toolconf: cannot")]


def _only(*programs: str, into: Path) -> str:
    """A PATH holding just ``programs`` (those that exist here) and this Python."""
    into.mkdir(exist_ok=True)
    for name in programs:
        found = shutil.which(name)
        if found:
            (into / name).symlink_to(found)
    return f"{Path(sys.executable).parent}{os.pathsep}{into}"


@pytest.mark.subprocess
@pytest.mark.parametrize("impl", ["agent:gemini-cli", "claude-code:2.1.88"])
def test_without_node_or_npm_the_run_ends_with_one_line(
    impl: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOLCONF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", _only("bash", into=tmp_path / "bin"))
    status, lines = _run(impl, capsys)
    assert status == 3
    assert lines == [
        f"toolconf: cannot run {impl}: node is not on PATH: npm peers need Node.js 20 or later "
        "and npm (Debian: apt-get install nodejs npm; elsewhere https://nodejs.org)"
    ]


@pytest.mark.subprocess
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_without_npm_the_run_ends_with_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOLCONF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", _only("node", "bash", into=tmp_path / "bin"))
    status, lines = _run("agent:gemini-cli", capsys)
    assert (status, len(lines)) == (3, 1)
    assert "npm is not on PATH" in lines[0]


def _tarball(manifest: dict[str, Any]) -> bytes:
    """An npm package tarball holding only its package.json."""
    data = json.dumps(manifest).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        entry = tarfile.TarInfo("package/package.json")
        entry.size = len(data)
        tar.addfile(entry, io.BytesIO(data))
    return out.getvalue()


class _Registry(http.server.BaseHTTPRequestHandler):
    """An npm registry holding FAKE 1.0.0, which needs PLATFORM 1.0.0, and FAKE 2.0.0, which
    may use PLATFORM 2.0.0; it has no release of PLATFORM."""

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""

    def do_GET(self) -> None:
        name = self.path.strip("/").replace("%2f", "/")
        host = f"http://{self.headers['Host']}"
        if name == FAKE:
            versions = {v: self._manifest(host, v) for v in ("1.0.0", "2.0.0")}
            self._send(json.dumps({"name": FAKE, "dist-tags": {}, "versions": versions}).encode())
        elif name == PLATFORM:
            self._send(json.dumps({"name": PLATFORM, "dist-tags": {}, "versions": {}}).encode())
        elif name == f"{FAKE}/-/{FAKE}-2.0.0.tgz":
            manifest = self._manifest(host, "2.0.0")
            del manifest["dist"]
            self._send(_tarball(manifest), "application/octet-stream")
        else:
            self.send_error(404)

    @staticmethod
    def _manifest(host: str, version: str) -> dict[str, Any]:
        needs = "dependencies" if version == "1.0.0" else "optionalDependencies"
        return {
            "name": FAKE,
            "version": version,
            needs: {PLATFORM: version},
            "dist": {"tarball": f"{host}/{FAKE}/-/{FAKE}-{version}.tgz"},
        }

    def _send(self, payload: bytes, kind: str = "application/json") -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def registry(monkeypatch: Patch, tmp_path: Path) -> Iterator[str]:
    """The registry above, npm pointed at it, and an empty cache of peers and of npm."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    monkeypatch.setenv("TOOLCONF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", url)
    monkeypatch.setenv("NPM_CONFIG_CACHE", str(tmp_path / "npm-cache"))
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


def _fake_agent(tmp_path: Path, version: str) -> str:
    text = (load_definition("gemini-cli").model_dump_json(by_alias=True)).replace(
        "@google/gemini-cli", FAKE
    )
    data = json.loads(text)
    data["install"]["version"] = version
    path = tmp_path / "fake.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return f"agent:{path}"


needs_npm = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm"
)


@needs_npm
@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("9.9.9", f"has no release {FAKE}@9.9.9 (ETARGET)"),
        ("1.0.0", f"has no {PLATFORM}@1.0.0, which it depends on (ETARGET; a platform package"),
        ("2.0.0", "bundle/gemini.js (a platform package npm skipped?): remove that directory"),
    ],
)
def test_a_release_or_platform_package_the_registry_lacks_ends_the_run(
    version: str, says: str, registry: str, capsys: Capture, tmp_path: Path
) -> None:
    assert registry.startswith("http://127.0.0.1:")
    status, lines = _run(_fake_agent(tmp_path, version), capsys)
    assert (status, len(lines)) == (3, 1)
    assert says in lines[0]


@needs_npm
@pytest.mark.subprocess
def test_an_unreachable_registry_ends_the_run_with_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOLCONF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9/")
    monkeypatch.setenv("NPM_CONFIG_FETCH_RETRIES", "0")
    monkeypatch.setenv("NPM_CONFIG_CACHE", str(tmp_path / "npm-cache"))
    status, lines = _run("agent:gemini-cli", capsys, "--jobs", "2")
    assert (status, len(lines)) == (3, 1)
    assert "the npm registry http://127.0.0.1:9/ cannot be reached (ECONNREFUSED)" in lines[0]


# -- the run layer ends on it wherever it comes -----------------------------------------


class _Gone:
    """A session whose implementation could start, and can no longer run."""

    def start(self) -> Hello:
        return Hello(protocol=1, implementation={"name": "x"}, features=frozenset())

    def evaluate(self, scenario: Any) -> ScenarioResult:
        raise ImplementationUnavailable("node is not on PATH")

    def close(self) -> None:
        """Nothing to stop."""


@pytest.mark.parametrize("jobs", [1, 2])
def test_sessions_that_cannot_run_end_the_whole_run(jobs: int) -> None:
    pool = SessionPool(_Gone(), _Gone, jobs)
    with pytest.raises(ImplementationUnavailable, match="node is not on PATH"):
        list(pool.judge_all(["a", "b", "c"]))  # type: ignore[list-item]
