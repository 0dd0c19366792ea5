"""Every peer kind by its scheme: ``connect("stdio:./adapter")`` makes the connector.

A connector is named by a string ``scheme[:rest]``:

- ``direct`` (the default): the reference engine in this process,
  ``reference.engine.Engine``; ``direct:module:attr`` uses another in-process
  engine class or factory (anything with ``handle(request) -> response``).
- ``stdio:<command>``: any implementation behind an adapter process speaking
  protocol v1 on stdin/stdout (the command is split with ``shlex``).
- ``claude-code:VERSION``: a pinned Claude Code release through its CLI.
- ``mcp:<mapping>``: an MCP server played through a mapping file.
- ``agent:NAME``: a coding-agent CLI through its definition file.
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

from conformance.errors import ConformanceError, MissingExtra
from conformance.peers.direct import DirectConnector
from conformance.peers.stdio import StdioConnector
from conformance.wire.connector import Connector, ConnectorOptions, EngineLike

__all__ = ["ConnectorFactory", "connect", "known_schemes", "register_connector", "scheme_usage"]

ConnectorFactory: TypeAlias = Callable[[str, ConnectorOptions], Connector]
"""Makes an unstarted connector from the text after ``scheme:`` (maybe empty)."""

_REGISTRY: dict[str, ConnectorFactory | str] = {}
_USAGE: dict[str, str] = {}


def register_connector(
    scheme: str,
    factory: ConnectorFactory | str,
    *,
    replace: bool = False,
    usage: str = "",
) -> None:
    """Make ``scheme:rest`` available to ``connect``, the CLI and the pytest plugin.

    ``factory`` may be a ``"module:attr"`` string, imported on first use.
    ``usage`` is how a user writes it (``stdio:COMMAND``), for ``--impl``'s help.

    Raises:
        ValueError: the scheme is taken and ``replace`` is false.
    """
    if scheme in _REGISTRY and not replace:
        raise ValueError(f"connector scheme {scheme!r} is already registered")
    _REGISTRY[scheme] = factory
    _USAGE[scheme] = usage or f"{scheme}:..."


def known_schemes() -> list[str]:
    """The registered schemes, sorted."""
    return sorted(_REGISTRY)


def scheme_usage(scheme: str) -> str:
    """How a user writes an implementation of ``scheme`` (``stdio:COMMAND``)."""
    return _USAGE.get(scheme, f"{scheme}:...")


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
        factory = cast(ConnectorFactory, _import(factory, f"the {scheme}: connector"))
    return factory(rest, options or ConnectorOptions())


def _import(target: str, what: str) -> Any:
    """``module:attr``, imported; a missing optional dependency names its pip command."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except ModuleNotFoundError as exc:
        if MissingExtra.extra_of(exc.name) is not None:
            raise MissingExtra(what, exc.name or "") from exc
        raise ConformanceError(f"{what}: cannot load {target} ({exc})") from exc
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


register_connector("direct", _direct, usage="direct[:MODULE:FACTORY]")
register_connector("stdio", _stdio, usage="stdio:COMMAND")
register_connector("mutant", "conformance.instruments.mutants:connect", usage="mutant:NAME")
register_connector(
    "claude-code", "conformance.peers.claude_code.connector:connect", usage="claude-code:VERSION"
)
register_connector("mcp", "conformance.peers.mcp.connector:connect", usage="mcp:MAPPING")
register_connector("agent", "conformance.peers.agent.connector:connect", usage="agent:NAME")
