"""``python -m conformance.instruments.mutants NAME``: the reference's stdio adapter, broken.

The mutant NAME breaks it.

A process patch is applied here, in a process that serves nothing else, so it
never reaches the runner, another mutant or the normal run.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from unittest import mock

from conformance.errors import ConformanceError
from conformance.instruments.mutants import MutantEngine, get_mutant
from reference import adapter


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m conformance.instruments.mutants NAME", file=sys.stderr)
        return 2
    try:
        mutant = get_mutant(args[0])
    except ConformanceError as exc:
        print(exc, file=sys.stderr)
        return 2
    if mutant.patch is not None:
        mutant.patch()
    with mock.patch.object(adapter, "Engine", functools.partial(MutantEngine, mutant)):
        return adapter.main()


if __name__ == "__main__":
    sys.exit(main())
