"""The reference engine of the tool system specified in SPEC.md."""

__version__ = "0.1.0"
__all__ = ["__version__"]
