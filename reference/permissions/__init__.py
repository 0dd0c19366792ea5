"""Permission rules and their evaluation (SPEC.md, PERM sections)."""
