"""Running solvers: the chance modes (exact, sampled, auto: objects that decide from the
game how a run treats chance), the runners (compiled chunks on the device, batches,
sharding; the sampled-chance runner with its host thread and draws), the run loop with its metric
record, and JAX's persistent compilation cache the runners turn on.

Layer 6: may import the layers below (``_util`` up to ``profiles``).
"""
