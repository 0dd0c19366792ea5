"""Permission rules and their evaluation (SPEC.md, section 4).

``rules`` parses rules and matches path rules; ``bash_rules`` matches Bash
command rules; ``decision`` holds :func:`~reference.permissions.decision.decide`
(PERM-ORDER-1); ``checks`` holds the tools' own checks (PERM-READ-1,
BASH-PERM-1). Import from the submodules: this package imports nothing, so
the tools can import ``rules`` without pulling in the decision.
"""
