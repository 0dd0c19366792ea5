"""Layer 2, the suite: what a scenario is and what it expects.

The scenario model and its loader (``scenario``, ``yamlsource``,
``yamlvalues``), the steps (``steps``), the expectations and their levels
(``checks``, ``matchers``), the suite's data files (``registry``) and the
selection of scenarios (``selection``). It knows the wire, never a runner or
a peer.
"""
