"""``python -m jaxcfr``: the command line (:mod:`jaxcfr.cli.launch`, signal handlers first)."""

from jaxcfr.cli.launch import console_main

console_main()
