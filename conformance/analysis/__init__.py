"""Layer 5, analysis: what runs mean, read from their results.

The console summary and reports (``console``, ``reports``), baselines
(``baseline``), fidelity tables, matrices and release diffs (``fidelity``,
``matrix``, ``release_diff``), and the suite's own lint (``lint``,
``citations``, and ``spec_lint`` for SPEC.md's shape, evidence and annexes).
"""
