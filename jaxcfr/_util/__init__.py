"""Utilities every layer may use: argument rules, atomic writes, JSON-safe values, signals,
scoped precision, progress bars (``bars``, tqdm), the filter of XLA's banners on stderr
(``native_stderr``), the meeting of a run's processes before a collective (``meet``),
a package's names imported when first asked for (``lazy``), bounded reads of the files a
user names (``reading``: a device or a pipe is not read without end).

Layer 0: imports nothing from jaxcfr.
"""
