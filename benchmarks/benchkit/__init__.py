"""What the benchmark programs share (``benchmarks/README.md`` lists the programs).

* :mod:`benchkit.timing`: CPU and wall clocks (this process, its finished children);
* :mod:`benchkit.memory`: this process's resident bytes, now and at the peak; a pytree's bytes;
* :mod:`benchkit.public_chunk`, :mod:`benchkit.stack_chunk`: one compiled loop of a solver on
  a public tree, and a stack's compiled chunk with one call of it timed;
* :mod:`benchkit.fresh`: one fresh Python process, timed from outside;
* :mod:`benchkit.peers`: the peer solvers ``bench.py`` times against jaxcfr;
* :mod:`benchkit.racing`: races of exploitability against time, and their plot;
* :mod:`benchkit.gpu`: the parts of ``gpu_check.py``, the one prepared GPU run;
* :mod:`benchkit.arguments`: command-line rules (``--target``, counts, a game, a preset).

The programs run as ``python benchmarks/NAME.py`` (their folder is then first on
``sys.path``, so ``import benchkit`` finds this package); nothing here is a program.
"""
