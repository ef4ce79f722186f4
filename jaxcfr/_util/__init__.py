"""Utilities every layer may use: argument rules, atomic writes, JSON-safe values, signals,
scoped precision.

Layer 0: imports nothing from jaxcfr.
"""
