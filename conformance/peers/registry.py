"""Every peer kind by its scheme: ``connect("stdio:./adapter")`` makes the connector.

A connector is named by a string ``scheme[:rest]``:

- ``direct`` (the default): the reference engine in this process,
  ``reference.engine.Engine``; ``direct:module:attr`` uses another in-process
  engine class or factory (anything with ``handle(request) -> response``).
- ``stdio:<command>``: any implementation behind an adapter process speaking
  protocol v1 on stdin/stdout (the command is split with ``shlex``).
- ``claude-code:VERSION``: a pinned Claude Code release through its CLI.
- ``mcp:<mapping>``: an MCP server played through a mapping file.
- ``mutant:<name>``: the deliberately broken variants of the reference.

New schemes are added with ``register_connector``; a factory given as a
``"module:attr"`` string is imported on first use, so naming a peer kind
costs nothing until it is used. Every connector gives the same guarantees:
each request is answered within its timeout or raises an ``AdapterFailure``
(crash, timeout, protocol error, internal error), and after such a failure
``restart()`` brings up a fresh instance with ``hello`` replayed.
"""

from __future__ import annotations

import importlib
import shlex
from collections.abc import Callable
from typing import Any, TypeAlias, cast

from conformance.errors import ConformanceError
from conformance.peers.direct import DirectConnector
from conformance.peers.stdio import StdioConnector
from conformance.wire.connector import Connector, ConnectorOptions, EngineLike

__all__ = ["ConnectorFactory", "connect", "known_schemes", "register_connector"]

ConnectorFactory: TypeAlias = Callable[[str, ConnectorOptions], Connector]
"""Makes an unstarted connector from the text after ``scheme:`` (maybe empty)."""

_REGISTRY: dict[str, ConnectorFactory | str] = {}


def register_connector(
    scheme: str, factory: ConnectorFactory | str, *, replace: bool = False
) -> None:
    """Make ``scheme:rest`` available to ``connect``, the CLI and the pytest plugin.

    ``factory`` may be a ``"module:attr"`` string, imported on first use.

    Raises:
        ValueError: the scheme is taken and ``replace`` is false.
    """
    if scheme in _REGISTRY and not replace:
        raise ValueError(f"connector scheme {scheme!r} is already registered")
    _REGISTRY[scheme] = factory


def known_schemes() -> list[str]:
    """The registered schemes, sorted."""
    return sorted(_REGISTRY)


def connect(spec: str, options: ConnectorOptions | None = None) -> Connector:
    """Make the (unstarted) connector that ``spec`` names, such as ``stdio:./adapter``.

    Raises:
        ConformanceError: unknown scheme, or a factory that cannot be loaded.
    """
    scheme, _, rest = spec.partition(":")
    factory = _REGISTRY.get(scheme)
    if factory is None:
        raise ConformanceError(
            f"unknown implementation {spec!r}; schemes: {', '.join(known_schemes())}"
        )
    if isinstance(factory, str):
        factory = cast(ConnectorFactory, _import(factory, f"connector scheme {scheme!r}"))
    return factory(rest, options or ConnectorOptions())


def _import(target: str, what: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ConformanceError(f"{what}: cannot load {target} ({exc})") from exc


def _direct(rest: str, options: ConnectorOptions) -> Connector:
    target = rest or "reference.engine:Engine"
    if ":" not in target:
        target += ":Engine"
    make = _import(target, "direct connector")

    def factory() -> EngineLike:
        return cast(EngineLike, make())

    return DirectConnector(
        factory, description="direct:" + target if rest else "direct", options=options
    )


def _stdio(rest: str, options: ConnectorOptions) -> Connector:
    argv = shlex.split(rest)
    if not argv:
        raise ConformanceError("stdio: needs a command, as in stdio:./my-adapter --flag")
    return StdioConnector(argv, description="stdio:" + rest, options=options)


register_connector("direct", _direct)
register_connector("stdio", _stdio)
register_connector("mutant", "conformance.instruments.mutants:connect")
register_connector("claude-code", "conformance.peers.claude_code.connector:connect")
register_connector("mcp", "conformance.peers.mcp.connector:connect")
