"""``python -m jaxcfr``: the command line."""

from jaxcfr.cli.app import console_main

console_main()
