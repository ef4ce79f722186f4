"""The CFR family: estimators, the regret and averaging rules, the configured solver core
and its presets, and exact analytics of what it computes (values, best responses,
exploitability).

Layer 4: may import ``jaxcfr._util``, ``jaxcfr.game``, ``jaxcfr.tensors`` and
``jaxcfr.kernels``. Pure functions of tensors and states; no host walk, no runs. (Not
named ``cfr``: ``jaxcfr.cfr`` is the vanilla-CFR preset.)
"""
