"""Layer 1, the wire: protocol v1 as the runner speaks it.

What a connector is (``connector``), the answer checks and the handshake
(``protocol``), and the profile names a session may ask for (``profiles``).
Below it are only the base modules ``conformance.errors`` and ``conformance.trees``
and the ``reference.protocol`` schema it checks against.
"""
