"""``python -m jaxcfr``: the command line."""

import sys

from jaxcfr.cli import main

sys.exit(main())
