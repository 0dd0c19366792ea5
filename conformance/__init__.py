"""The conformance suite of the tool system: scenarios, runner and connectors.

Run it with ``python -m conformance run`` (or ``toolconf run``); see
``conformance.cli`` for the commands and ``conformance.pytest_plugin`` for
running scenarios under pytest. The names below are the programmatic API.
"""

__version__ = "0.1.0"

from conformance.checks import LEVELS
from conformance.connectors import (
    Connector,
    ConnectorOptions,
    DirectConnector,
    StdioConnector,
    connect,
    register_connector,
)
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
from conformance.protocol import PROTOCOL_VERSION, Hello
from conformance.results import LevelCount, Outcome, ScenarioResult, Verdict
from conformance.runner import Runner, run_scenario
from conformance.scenario import Scenario, load_scenario, load_scenarios, parse_scenario

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
    "Outcome",
    "ProtocolError",
    "Runner",
    "Scenario",
    "ScenarioError",
    "ScenarioLoadError",
    "ScenarioResult",
    "StdioConnector",
    "Verdict",
    "VersionMismatch",
    "__version__",
    "connect",
    "load_scenario",
    "load_scenarios",
    "parse_scenario",
    "register_connector",
    "run_scenario",
]
