"""Layer 3, running: one scenario at a time against a connector.

The runner (``runner``), a scenario's sandbox on the real disk (``sandbox``),
what came of it (``results``) and expected failures (``xfail``). It takes a
connector made elsewhere and never names a peer kind.
"""
