"""`python -m spconv ...` is the `spconv` console script."""
import sys

from .cli import main

sys.exit(main())
