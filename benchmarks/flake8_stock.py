"""flake8 as it ships (pyflakes, pycodestyle, mccabe), for benchmarks/run.py: idemlint's own
flake8 plugin, installed with idemlint, is left out, or flake8's time would include idemlint's.
flake8 skips the distributions named in its BANNED_PLUGINS; idemlint is added to them."""

from __future__ import annotations

import sys

import flake8.plugins.finder as finder
from flake8.main.cli import main

finder.BANNED_PLUGINS["idemlint"] = "0"

if __name__ == "__main__":
    sys.exit(main())
