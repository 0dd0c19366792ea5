"""Property tests of the file tools, run against any implementation through a connector.

``driver`` opens one protocol session per example in a fresh sandbox;
``strategies`` holds every Hypothesis strategy; ``oracle`` says what SPEC.md
expects, written from its text and independent of ``reference/``. The tests
(``test_*.py``) take the ``implementation`` fixture of ``conftest.py``, which
follows the toolconf plugin's ``--impl`` (default ``direct``)::

    python -m pytest conformance/instruments/properties
    python -m pytest conformance/instruments/properties \
        --toolconf-impl "stdio:python -m reference.adapter"
    CI=1 python -m pytest conformance/instruments/properties      # the derandomized ``ci`` profile
"""
