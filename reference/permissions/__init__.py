"""Permission rules and their evaluation (SPEC.md, section 4).

The rule library: ``rules`` parses rules and matches path rules;
``bash_rules`` matches Bash command rules; ``session_rules`` holds one
session's parsed rules and the one deny-rule lookup every step shares;
``directories`` the working directories (PERM-DIRS-1); ``tool_paths`` the file
tools' ``get_path`` (TOOL-PATH-1). ``checks`` holds the tools' own checks
(PERM-READ-1, BASH-PERM-1), built on the library. ``decision`` holds
:func:`~reference.permissions.decision.decide` (PERM-ORDER-1), which uses all of
them; none of them, and no tool, imports it. Import from the submodules: this
package imports nothing, so the tools can import the library without pulling
in the decision.
"""
