"""``python -m conformance``: the same commands as the ``toolconf`` script."""

import sys

from conformance.cli import main

sys.exit(main())
