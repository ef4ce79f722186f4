"""One call from a game to an answer: ``solve``, the one builder of runners (``runners``:
``solve`` and ``train`` build theirs there), and training abstractions with their lifted
full-game figures.

Layer 7: may import the layers below (``_util`` up to ``engine``).
"""
