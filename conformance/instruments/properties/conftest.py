"""Hypothesis profiles and the implementation the properties drive.

``ci`` (chosen when the ``CI`` environment variable is set) is derandomized
and bounded so that the whole directory runs in well under a minute with the
direct connector; ``dev`` (otherwise) tries more examples. ``--hypothesis-profile``
overrides both. The implementation is the toolconf plugin's ``--impl``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from conformance.instruments.properties.driver import Implementation
from conformance.wire.connector import ConnectorOptions

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    max_examples=100,
    stateful_step_count=30,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=200,
    stateful_step_count=50,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def pytest_configure(config: pytest.Config) -> None:
    """Load ``ci`` or ``dev`` unless ``--hypothesis-profile`` chose one; add ``requires``."""
    config.addinivalue_line(
        "markers", "requires(*features): skip unless the implementation declares the features"
    )
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def implementation(
    toolconf_impl: str, toolconf_options: ConnectorOptions
) -> Iterator[Implementation]:
    """The implementation under test, started once for the whole run."""
    started = Implementation(toolconf_impl, toolconf_options)
    yield started
    started.close()


@pytest.fixture(autouse=True)
def _required_features(request: pytest.FixtureRequest, implementation: Implementation) -> None:
    """Skip a test whose ``requires`` features the implementation does not declare."""
    marker = request.node.get_closest_marker("requires")
    missing = implementation.missing(*marker.args) if marker else []
    if missing:
        pytest.skip(f"not applicable: {implementation.name} lacks {', '.join(missing)}")
