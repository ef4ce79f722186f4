"""The sections of ``benchmarks/gpu_check.py`` about how a run is laid out on the device:
stacks of one game, a forest of different trees, one game split over the devices.

A mixin of :class:`benchkit.gpu.measure.Measure` (which holds the lowered games, the results and
the budget; see there).
"""

from __future__ import annotations

import time

import jaxcfr
from benchkit.gpu.timing import exact_bytes, game_bytes, steady_state


class Layouts:
    """The ``stacks`` and ``split`` sections."""

    def _stack_figure(self, lowered, clock, real_nodes, members, real_bytes=None):
        start = time.perf_counter()
        runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus())
        setup = time.perf_counter() - start
        timing, _ = steady_state(runner, runner.init(), self.sizes.rounds, self.sizes.target,
                                 clock)
        ms = timing["ms_per_iteration"]
        moved = exact_bytes(runner, lowered)
        return {"members": members, "nodes": real_nodes, "setup_s": setup,
                "us_per_game_iteration": ms * 1e3 / members, **timing,
                **self.bound(ms, moved if real_bytes is None else real_bytes),
                "padded_bytes_per_iteration": moved}

    def stacks(self, clock) -> None:
        s = self.sizes
        single, _ = self.lower(s.stack_game)
        first: dict = {}

        def stack(b):
            start = time.perf_counter()
            batch = jaxcfr.stack([single] * b)
            stacking = time.perf_counter() - start
            figure = self._stack_figure(batch, clock, single.num_nodes * b, b)
            figure["stack_s"] = stacking
            first.setdefault("us", figure["us_per_game_iteration"])
            first.setdefault("label", f"x{b}")
            figure.update(versus=f"{first['label']}, per game-iteration",
                          ratio=figure["us_per_game_iteration"] / first["us"])
            return figure

        def forest():
            members = [self.lower(f"leduc_poker(ranks={r})")[0] for r in s.forest_ranks]
            start = time.perf_counter()
            batch = jaxcfr.stack(members * s.forest_copies)
            stacking = time.perf_counter() - start
            real = s.forest_copies * sum(game_bytes(m) for m in members)
            nodes = s.forest_copies * sum(m.num_nodes for m in members)
            figure = self._stack_figure(batch, clock, nodes, len(members) * s.forest_copies,
                                        real_bytes=real)
            reference = self.forest_reference()
            tree, _ = self.lower(reference)
            one = self._stack_figure(tree, clock, tree.num_nodes, 1)
            per_node = (figure["ms_per_iteration"] / nodes) / (one["ms_per_iteration"] /
                                                               tree.num_nodes)
            figure.update(stack_s=stacking, reference=reference,
                          reference_nodes=tree.num_nodes,
                          reference_ms=one["ms_per_iteration"], versus=(
                              f"{reference} ({tree.num_nodes:,} nodes), per node"),
                          ratio=per_node,
                          note="The forest's bound counts the real trees' bytes; "
                               "`padded_bytes_per_iteration` is what its padded layout moves "
                               "(every member padded to the largest per level).")
            self.results.figure("stacks", item=f"{reference} (one tree, the forest's size)",
                                **{k: v for k, v in one.items() if k != "note"})
            return figure

        items = [("single", f"{s.stack_game} (one game)",
                  lambda: self._stack_figure(single, clock, single.num_nodes, 1))]
        items += [(f"x{b}", f"{s.stack_game} x{b}", lambda b=b: stack(b)) for b in s.stacks]
        label = (f"forest: leduc ranks {s.forest_ranks[0]}..{s.forest_ranks[-1]} "
                 f"x{s.forest_copies}")
        # the largest stack last: building it is most of the section's host time (stacking
        # 4,096 Leduc games and the runner's set-up took 50 + 37 s on a loaded 2-core host)
        items.insert(len(items) - 1 if len(s.stacks) > 1 else len(items),
                     ("forest", label, forest))
        self.items("stacks", clock, items)

    def split(self, clock) -> None:
        text = self.sizes.split_game

        def one():
            lowered, info = self.lower(text)
            mesh = jaxcfr.batch_mesh()
            devices = int(mesh.devices.size)
            plain = jaxcfr.Runner(lowered, jaxcfr.cfr_plus())
            alone, _ = steady_state(plain, plain.init(), self.sizes.rounds, self.sizes.target,
                                    clock)
            runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), mesh=mesh)
            timing, _ = steady_state(runner, runner.init(), self.sizes.rounds,
                                     self.sizes.target, clock)
            note = ("One device: the 1-device mesh (the split path: padding to a multiple of "
                    "1, sharded placement), not a speed-up." if devices == 1 else
                    f"Split over {devices} devices: nodes, rows and leaves sharded.")
            ms = timing["ms_per_iteration"]
            # each device moves its share of the bytes: the bound is theirs over D devices
            bound = self.bound(ms, exact_bytes(plain, lowered) / devices)
            return {"game": text, "devices": devices, "lowering_s": info["lowering_s"],
                    **timing, "unsplit_ms": alone["ms_per_iteration"],
                    "ratio": ms / alone["ms_per_iteration"], **bound, "note": note}
        self.items("split", clock, [("split", f"{text} over the devices", one)])
