"""`python -m diamond_jupyter.cli`."""

import sys

from .main import main

sys.exit(main())
