"""Device kernels over the lowered tensors: masked normalisation and regret matching, node
passes (reach, values), the sequence form, sampled subtrees of fixed capacity, depth-first
walks (one lane per traversal), traversals as counts over the whole tree, compensated
(two-sum) sums, segment sums by planned gathers (``segments``: no scatter-add, for GPUs).

Layer 3 (beside ``lowering``): may import ``jaxcfr._util``, ``jaxcfr.game`` (its
vocabulary) and ``jaxcfr.tensors``. Pure JAX functions of arrays; nothing here knows about
solvers, runs or the host walk.
"""
