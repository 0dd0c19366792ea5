"""npm packages in the cache, never in the project: the one installer of every npm peer.

A peer (a Claude Code release, an MCP server, a coding-agent CLI) is installed
on first use with one ``npm install`` of its pinned version into a directory
of its own under the cache root (``$TOOLCONF_CACHE`` or ``~/.cache/toolconf``);
later runs reuse it. A first install says so on stderr and shows npm's own
progress, since it can take minutes. A machine that cannot install (no node,
no npm, no registry, a release or platform package the registry does not
have) gets one ``PeerUnavailable`` whose message is one line naming what is
missing and how to fix it (``diagnose`` reads npm's error code); npm's own
error report is not repeated.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from conformance.errors import ConformanceError, ImplementationUnavailable
from conformance.run.file_lock import held

__all__ = [
    "PeerUnavailable",
    "cache_root",
    "diagnose",
    "ensure_package",
    "npm_directory",
    "resolve_version",
    "run_npm",
]

_VERSION: Final = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
NPM_TIMEOUT: Final = 900.0
"""Seconds one npm command may take (a native agent package is hundreds of MB)."""
_DETAIL: Final = 300
_KEPT_LINES: Final = 400
_CODE: Final = re.compile(r"^npm (?:error|ERR!) code (\S+)", re.MULTILINE)
_NOTARGET: Final = re.compile(r"No matching version found for (\S+?)\.?$", re.MULTILINE)
_NOT_FOUND: Final = re.compile(r"404 Not Found - GET (\S+)")
_REQUEST: Final = re.compile(r"request to (\S+) failed")
_NETWORK: Final = frozenset(
    {
        "ECONNREFUSED",
        "ECONNRESET",
        "ENOTFOUND",
        "EAI_AGAIN",
        "ETIMEDOUT",
        "ENETUNREACH",
        "EHOSTUNREACH",
        "ESOCKETTIMEDOUT",
        "ERR_SOCKET_TIMEOUT",
        "CERT_HAS_EXPIRED",
        "SELF_SIGNED_CERT_IN_CHAIN",
        "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    }
)


class PeerUnavailable(ImplementationUnavailable):
    """A peer cannot be installed or started here (no node, no npm, no registry).

    Not a failure of the peer: no scenario can run, so a run ends with its one line.
    """


def cache_root() -> Path:
    """The cache every peer is installed under: ``$TOOLCONF_CACHE`` or ``~/.cache/toolconf``."""
    configured = os.environ.get("TOOLCONF_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "toolconf"


def npm_directory(package: str, version: str) -> Path:
    """The cache directory of one pinned npm package that has no directory of its own."""
    return cache_root() / "npm" / package.replace("/", "+") / version


def tool(name: str) -> str:
    """The path of ``node`` or ``npm``.

    Raises:
        PeerUnavailable: it is not on PATH.
    """
    found = shutil.which(name)
    if found is None:
        raise PeerUnavailable(
            f"{name} is not on PATH: npm peers need Node.js 20 or later and npm "
            "(Debian: apt-get install nodejs npm; elsewhere https://nodejs.org)"
        )
    return found


def run_npm(args: list[str], cwd: Path | None = None, *, show: bool = False) -> str:
    """Run ``npm ARGS`` and return its stdout.

    ``show`` sends what npm prints (its progress, warnings and closing
    ``added N packages`` line, not its error report) to this process's
    stderr as it comes, and returns "": the user sees a long install happen,
    and stdout stays free for a report.

    Raises:
        PeerUnavailable: npm is missing, failed (the message is ``diagnose``'s
            one line), or took over ``NPM_TIMEOUT``.
    """
    argv = [tool("npm"), *args]
    what = f"npm {' '.join(args)}"
    if show:
        status, output = _run_shown(argv, cwd, what)
        stdout = ""
    else:
        try:
            done = subprocess.run(
                argv, cwd=cwd, capture_output=True, text=True, timeout=NPM_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise PeerUnavailable(f"{what} took over {NPM_TIMEOUT:g} s") from exc
        status, output, stdout = done.returncode, f"{done.stderr}\n{done.stdout}", done.stdout
    if status != 0:
        raise PeerUnavailable(diagnose(what, status, output))
    return stdout


def _run_shown(argv: list[str], cwd: Path | None, what: str) -> tuple[int, str]:
    """Run npm, its lines (but its error report) copied to stderr as they come; its status
    and its last lines."""
    kept: collections.deque[str] = collections.deque(maxlen=_KEPT_LINES)
    sink = _stderr_fd()
    with subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    ) as process:

        def copy() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                kept.append(line)
                if not line.startswith(("npm error", "npm ERR!")):
                    os.write(sink, line.encode("utf-8", "replace"))

        reader = threading.Thread(target=copy, daemon=True)
        reader.start()
        try:
            status = process.wait(timeout=NPM_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            process.kill()
            process.wait()
            raise PeerUnavailable(f"{what} took over {NPM_TIMEOUT:g} s") from exc
        reader.join(timeout=10.0)
    return status, "".join(kept)


def diagnose(what: str, status: int, output: str) -> str:
    """One line saying why ``what`` (an npm command) failed and how to fix it, from npm's
    error code in ``output``; npm's last error line when the code is not one known here."""
    found = _CODE.search(output)
    code = found[1] if found else ""
    registry = _registry(output)
    if code in _NETWORK or "network" in code.lower():
        return (
            f"{what} failed: the npm registry {registry} cannot be reached ({code}); check "
            "the network or proxy (npm config get proxy), or point npm at a reachable "
            "registry (npm config set registry URL)"
        )
    if code == "ETARGET":
        missing = _NOTARGET.search(output)
        name = missing[1] if missing else "a package"
        if missing is None or name in what:
            return (
                f"{what} failed: {registry} has no release {name} (ETARGET): pin a release "
                "it has (npm view PACKAGE versions)"
            )
        return (
            f"{what} failed: {registry} has no {name}, which it depends on (ETARGET; a "
            "platform package not published for this release?): pin another release"
        )
    if code == "E404":
        missing = _NOT_FOUND.search(output)
        return (
            f"{what} failed: {registry} has no such package (E404"
            + (f", {missing[1]}" if missing else "")
            + "): check the package name, or the registry (npm config get registry)"
        )
    if code == "EBADPLATFORM":
        return (
            f"{what} failed: the package does not support this platform (EBADPLATFORM): "
            "use a machine of a platform it lists, or another release"
        )
    if code in {"ENOSPC", "EACCES", "EPERM", "EROFS"}:
        return (
            f"{what} failed: cannot write the install ({code}): free space or fix the "
            "permissions of the cache (TOOLCONF_CACHE moves it)"
        )
    last = [
        line.strip()
        for line in output.splitlines()
        if line.startswith(("npm error", "npm ERR!")) and "A complete log" not in line
    ]
    detail = last[-1] if last else (output.strip().splitlines() or ["no output"])[-1]
    return f"{what} failed with status {status} ({code or 'no error code'}): {detail[:_DETAIL]}"


def _registry(output: str) -> str:
    """The registry npm talked to, as its output names it, else as it is configured."""
    request = _REQUEST.search(output) or _NOT_FOUND.search(output)
    if request is not None:
        parts = urlsplit(request[1])
        if parts.scheme and parts.netloc:
            return f"{parts.scheme}://{parts.netloc}/"
    configured = os.environ.get("NPM_CONFIG_REGISTRY")
    return configured or "the npm registry"


def _stderr_fd() -> int:
    """The descriptor of this process's stderr (pytest's capture may replace the object)."""
    sys.stderr.flush()
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


def resolve_version(package: str, version: str) -> str:
    """A release number: ``latest`` asks the registry; a number is checked and returned.

    Raises:
        PeerUnavailable: npm is missing or the registry cannot be reached.
        ConformanceError: ``version`` is neither ``latest`` nor ``N.N.N``.
    """
    if version == "latest":
        answer = json.loads(run_npm(["view", f"{package}@latest", "version", "--json"]))
        return str(answer[-1] if isinstance(answer, list) else answer)
    if not _VERSION.match(version):
        raise ConformanceError(f"{package}@{version}: give a release such as 1.2.3, or latest")
    return version


def ensure_package(package: str, version: str, directory: Path | None = None) -> Path:
    """The installed ``package@version`` (its directory under ``node_modules``).

    Installs it into ``directory`` (default ``npm_directory``) first if it is
    not there, announcing the first install on stderr.

    Raises:
        PeerUnavailable: node or npm is missing, or the install failed.
    """
    where = directory if directory is not None else npm_directory(package, version)
    installed = where / "node_modules" / package
    try:
        # Runs at once (pytest-xdist workers, shards, --jobs) install one after the other:
        # the first installs, the others find it installed once the lock is theirs.
        with held(where.parent / f".{where.name}.lock", timeout=NPM_TIMEOUT):
            if (installed / "package.json").exists():
                return installed
            _install(package, version, where)
    except TimeoutError as exc:
        raise PeerUnavailable(f"{package}@{version}: {exc}") from exc
    except OSError as exc:
        raise PeerUnavailable(f"{package}@{version}: cannot use the cache: {exc}") from exc
    if not (installed / "package.json").exists():
        raise PeerUnavailable(f"npm install {package}@{version} left no {installed}")
    return installed


def _install(package: str, version: str, where: Path) -> None:
    tool("node")
    tool("npm")
    where.mkdir(parents=True, exist_ok=True)
    print(
        f"toolconf: installing {package}@{version} into {where} (first use; npm's progress "
        "follows)",
        file=sys.stderr,
        flush=True,
    )
    run_npm(
        ["install", "--no-audit", "--no-fund", "--no-save", f"{package}@{version}"],
        cwd=where,
        show=True,
    )
