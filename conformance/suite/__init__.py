"""Layer 2, the suite: what a scenario is and what it expects.

The scenario model and its loader (``scenario``, ``yamlsource``,
``yamlvalues``), the steps (``steps``), the expectations and their levels
(``checks``, ``matchers``, ``levels``), the suite's data files
(``registry``), the selection of scenarios by the IDs they cite and where
those IDs' rules come from (``selection``, ``provenance``), and the one model of SPEC.md with its
evidence and profile annexes (``spec``, ``evidence``, ``annexes``). It knows
the wire, never a runner or a peer.
"""
