"""The parts of ``benchmarks/gpu_check.py`` (the one prepared GPU run): its plan, budget and
result files (``plan``), what each section measures (``measure``), and the timing helpers
(``timing``), stack layouts (``layouts``) and determinism runs (``determinism``) it uses."""
