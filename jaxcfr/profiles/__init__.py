"""Strategies on the host: keyed profiles (play, save, load, evaluate), lifting abstract
profiles to the full game (by elimination, by action translation, through buckets), host
walks of fixed profiles, estimated analytics.

Layer 5: may import the layers below (``_util``, ``game``, ``tensors``, ``lowering``,
``kernels``, ``solvers``).
"""
