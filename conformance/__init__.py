"""The conformance suite of the tool system: scenarios, runner and connectors.

Run it with ``python -m conformance run`` (or ``toolconf run``); see
``conformance.cli`` for the commands and ``conformance.pytest_plugin`` for
running scenarios under pytest. The names below are the programmatic API.
"""

from conformance.errors import (
    AdapterCrash,
    AdapterError,
    AdapterFailure,
    AdapterTimeout,
    ConformanceError,
    ProtocolError,
    ScenarioError,
    ScenarioLoadError,
    VersionMismatch,
)
from conformance.peers.direct import DirectConnector
from conformance.peers.registry import connect, register_connector
from conformance.peers.stdio import StdioConnector
from conformance.run.results import LevelCount, LevelVerdict, Outcome, ScenarioResult
from conformance.run.runner import Runner, run_scenario
from conformance.run.session import RunSession, RunSettings
from conformance.suite.checks import LEVELS
from conformance.suite.scenario import Scenario, load_scenario, load_scenarios, parse_scenario
from conformance.wire.connector import Connector, ConnectorOptions
from conformance.wire.protocol import PROTOCOL_VERSION, Hello
from reference.version import __version__

__all__ = [
    "LEVELS",
    "PROTOCOL_VERSION",
    "AdapterCrash",
    "AdapterError",
    "AdapterFailure",
    "AdapterTimeout",
    "ConformanceError",
    "Connector",
    "ConnectorOptions",
    "DirectConnector",
    "Hello",
    "LevelCount",
    "LevelVerdict",
    "Outcome",
    "ProtocolError",
    "RunSession",
    "RunSettings",
    "Runner",
    "Scenario",
    "ScenarioError",
    "ScenarioLoadError",
    "ScenarioResult",
    "StdioConnector",
    "VersionMismatch",
    "__version__",
    "connect",
    "load_scenario",
    "load_scenarios",
    "parse_scenario",
    "register_connector",
    "run_scenario",
]
