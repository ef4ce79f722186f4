"""From a game to tensors, on the host: the tree walk (serial and over worker processes),
sizes and the memory budget before walking, the cache of lowered games, stacks of games,
the host index of a lowered tree (``tree_index``: paths, subtrees, rows' members).

Layer 3: may import ``jaxcfr._util``, ``jaxcfr.game`` and ``jaxcfr.tensors``; never the
device side (``kernels`` and above).
"""
