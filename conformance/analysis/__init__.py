"""The analysis layer: reports, fidelity, matrix, diffs and the lint."""
