"""``python -m skdbg.sim job …`` (see :mod:`skdbg.sim.job`)."""

from __future__ import annotations

import sys

from skdbg.sim.job import main

if __name__ == "__main__":
    sys.exit(main())
