"""The parts of the ``toolconf`` command line that several commands and the pytest plugin share.

``options`` defines each option once (selection, output, implementation,
levels), so a name means the same in every command; ``run`` and ``summary``
are the two commands built on a run's results.
"""
