"""``python -m chimera``: the same as the ``chimera`` command."""

from __future__ import annotations

import sys

from chimera.cli import main

if __name__ == "__main__":
    sys.exit(main())
