"""The one version string of the distribution (``toolsys-reference``).

``pyproject.toml`` reads it at build time, and both packages (``reference``,
``conformance``) re-export it as ``__version__``.
"""

__version__ = "0.1.0"
