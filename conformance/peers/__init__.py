"""Connectors that judge other implementations of the tool system (peers)."""
