"""``toolconf stress``: attacks on an implementation through protocol v1 (PROTO-STRESS-1).

Four classes, each a module with a ``run_*`` function returning its figures:
``kills`` (SIGKILL during Write and Edit), ``fuzz`` (malformed protocol
lines), ``hostile`` (files that hang or flood a naive reader) and ``bypass``
(attempts around deny rules). ``stress.run_stress`` runs the chosen ones and
``stress`` also renders the console summary and the JSON figures.
"""
