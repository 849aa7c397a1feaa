"""`python -m immconv ...` is the `immconv` console script."""
import sys

from .cli import main

sys.exit(main())
