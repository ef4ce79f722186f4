"""One call from a game to an answer: ``solve``, and training abstractions with their
lifted full-game figures.

Layer 7: may import the layers below (``_util`` up to ``engine``).
"""
