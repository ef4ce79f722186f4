"""Running solvers: the runners (compiled chunks on the device, batches, sharding; the
sampled-chance runner with its host thread and draws) and the run loop with its metric
record.

Layer 6: may import the layers below (``_util`` up to ``profiles``).
"""
