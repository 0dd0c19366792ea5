"""Grep: the tool (``tool``), its two engines (ripgrep, ``rg_engine``; pure Python,
``python_engine``), what both share (``search``), the pattern dialect (``pattern``) and
ripgrep's file types (``file_types``)."""
