"""The built-in tools, one module each."""
