"""``python -m jaxcfr``: the command line."""

from jaxcfr.cli import console_main

console_main()
