"""Layer 6, instruments: measuring and attacking implementations.

Benchmarks of what tools cost (``bench``), hostile input, kills and
permission bypasses (``reliability``), deliberately broken engines the suite
must catch (``mutants``) and Hypothesis properties (``properties``).
"""
