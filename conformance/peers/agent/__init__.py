"""The ``agent:NAME`` peers: coding-agent CLIs driven through a scripted model API.

Each agent is described by a data file (``definitions/NAME.yaml``, validated
by ``definition``), runs its own tool pipeline against a scripted model on
the loopback (``model_api``), inside a loopback-only network namespace
(``loopback``), with its own home and configuration.
"""
