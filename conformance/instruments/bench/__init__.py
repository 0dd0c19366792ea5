"""Measuring what dedup and the token gate save (``toolconf bench``).

The workloads (``corpus``, ``trace``) are shared by the pytest-benchmark
suite in ``benchmarks/``, which times the reference engine's functions, and by
``toolconf bench``, which times any implementation through protocol v1.
"""
