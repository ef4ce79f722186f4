"""The one builder of runners: from a game and checked options to the runner of the run.

:func:`jaxcfr.solve` (and with it ``jaxcfr resolve``'s and :func:`jaxcfr.resolve`'s
stacked runs, and ``jaxcfr solve``), and :func:`jaxcfr.train` (``jaxcfr train``, through
:func:`jaxcfr.runs.train.build_runner`, which only says how a config names its game) all
build their runner here: the chance mode chooses between the lowered game and sampled
chance (:meth:`jaxcfr.engine.chance.ChanceMode.choose`), and this function makes the
:class:`~jaxcfr.engine.runner.Runner` or the
:class:`~jaxcfr.engine.sampled_chance.SampledChanceRunner` of that choice, with one
wording of what may not be combined.
"""

from __future__ import annotations

import os
from typing import Callable


from jaxcfr._util.arguments import ArgumentError, api_spelling
from jaxcfr.engine.protocol import RunnerProtocol
from jaxcfr.api.locks import (BREAKS_SYMMETRY, LockError, locked_stack, resolve_lock,
                               resolve_stack_lock, symmetric_lock, unmerged_note)
from jaxcfr.engine.runner import Runner
from jaxcfr.solvers.locking import Lock
from jaxcfr.engine.loop import lower_public_reporting
from jaxcfr.lowering.budget import default_memory_budget
from jaxcfr.lowering.public import PublicLowered, evaluation_overlap_fits, public_game_of
from jaxcfr.lowering.public_buckets import OUTCOME_STEPS, bucket_hands
from jaxcfr.lowering.public_stack import PublicStack, stack_overlap_fits

__all__ = ["make_runner"]


def make_runner(game, options: "SolveOptions", *, status=None, mesh=None,  # noqa: F821
                spell=api_spelling, label: str = "",
                check_sampled: Callable[[str], None] | None = None,
                **lower_kwargs) -> RunnerProtocol:
    """The runner of ``options`` (:class:`jaxcfr.api.solve.SolveOptions`) on ``game``.

    A public tree (a PublicGame, a lowered one, or a game string naming one:
    :func:`~jaxcfr.lowering.public.public_game_of`) is lowered by
    :func:`~jaxcfr.lowering.public.lower_public` and run by the same Runner (the seam
    chooses its value kernel), full width, in one process, with its chance enumerated;
    so is a stack of them (a :class:`~jaxcfr.lowering.public_stack.PublicStack`, its
    members padded to one shape and stepped by the seam's stack layout).

    Args:
      game: a game string, a Game or a LoweredGame (a stack: its batch of games).
      status: told about lowering (:func:`jaxcfr.engine.loop.lower_reporting`).
      mesh: shard the run (:class:`~jaxcfr.engine.runner.Runner`; not under sampled
        chance).
      spell: how the caller spells the arguments in errors (``chance``, ``--chance``,
        ``solver.chance``).
      label: the game's name in a sampled-chance runner's messages.
      check_sampled: ``check_sampled(because)`` checks what sampled chance may not be
        combined with when the game turns out to be sampled (default: the options'
        own :meth:`~jaxcfr.api.solve.SolveOptions.check_sampled_chance`).
      lower_kwargs: how a game is lowered (``cache``, ``workers``, ``sort_infosets``,
        ``name``, ``abstraction``: :func:`jaxcfr.lower`).
    """
    public = game if isinstance(game, PublicStack) else public_game_of(game)
    if public is not None:                     # a public tree (docs/public_trees.md)
        text = game if isinstance(game, (str, os.PathLike)) else None
        return _public_runner(public, options, mesh=mesh, spell=spell, status=status,
                              name=lower_kwargs.get("name") or label, text=text,
                              cache=lower_kwargs.get("cache"),
                              memory_budget=lower_kwargs.get("memory_budget"))
    if getattr(options, "per_member", False):
        raise ArgumentError("per-member parameters take a stack of public trees",
                            spell("combine"))
    lowered, sampled = options.chance.choose(game, status, **lower_kwargs)
    lock = getattr(options, "lock", None)
    if sampled is None:
        runner = Runner(lowered, options.solver, options.parameters,
                        precision=options.precision, chunk=options.device.chunk, mesh=mesh,
                        compilation_cache=options.device.compilation_cache)
        if lock is not None:                 # node locking (jaxcfr.api.locks)
            runner.set_lock(resolve_lock(lowered, lock))
        return runner
    if lock is not None:
        raise ArgumentError(f"{spell('lock')}: node locking needs the lowered tree, and "
                            "this game is solved under sampled chance", spell("lock"))
    if mesh is not None:
        raise ArgumentError(f"sampled chance ({spell('chance')}) runs in one process on one "
                            "device: it cannot be sharded or run over several processes",
                            spell("chance"))
    options.chance.when_sampling(check_sampled or (
        lambda because: options.check_sampled_chance(spell, because=because)))
    from jaxcfr.engine.sampled_chance import SampledChanceRunner   # only a sampled run
    return SampledChanceRunner(sampled, options.solver, options.parameters,
                               precision=options.precision, chunk=options.device.chunk,
                               draws=options.chance.draws, workers=options.chance.workers,
                               exact=lowered, name=label,
                               compilation_cache=options.device.compilation_cache)


def _bucketed(lowered, options):
    """``lowered`` with its hands padded to buckets (other boards of the bet tree: one
    program) when the options ask for it and it is one public tree, not a stack."""
    if options.device.hand_buckets and isinstance(lowered, PublicLowered):
        return bucket_hands(lowered)
    return lowered


def _outcome_buckets(options) -> dict:
    """``lower_public``'s ``outcome_steps`` where the hand buckets are on (another suit
    pattern's merged chance outcomes walked to the same tree: :data:`OUTCOME_STEPS`) and
    nothing is locked (a lock is resolved on the representatives' tree, or unmerged)."""
    if options.device.hand_buckets and getattr(options, "lock", None) is None:
        return {"outcome_steps": OUTCOME_STEPS}
    return {}


def _public_runner(game, options, *, mesh, spell, name: str, status=None, text=None,
                   cache=None, memory_budget: int | None = None) -> Runner:
    """The Runner of a public tree ``game`` (a PublicGame, a PublicLowered or a
    PublicStack, already lowered and padded): what does
    not apply to it refused, named as ``spell`` renders it; lowering is told to
    ``status``, checked against the memory budget, and goes through the cache of lowered
    games when ``cache`` asks and the game came as the string ``text``."""
    if options.chance.always_samples:
        raise ArgumentError("sampled chance does not apply to a public tree (its chance is "
                            "enumerated: the deal is the hand vectors)", spell("chance"))
    if mesh is not None:
        raise ArgumentError("a public tree is solved in one process on one device (no "
                            "cluster or mesh)", spell("cluster"))
    estimator = options.solver.estimator
    if not estimator.dense or estimator.seeded:
        raise ArgumentError(f"a public tree is solved full width: the estimator "
                            f"{estimator.describe()!r} samples (leave "
                            f"{spell('sampling')} unset)", spell("sampling"))
    # the budget counts the state this solver keeps (postflop-dcfr 2 tables, cfr+ 3,
    # pcfr+ 4) in the run's floats, at walk time too
    state = options.solver.state_size(options.precision)
    lowered = game if isinstance(game, PublicStack) else lower_public_reporting(
        game, status, text=text, cache=cache, name=name, memory_budget=memory_budget,
        **state, **_outcome_buckets(options))
    lowered = _bucketed(lowered, options)
    lock = getattr(options, "lock", None)
    resolved = None
    if lock is not None and getattr(lowered, "merged", ()) and not isinstance(
            game, (PublicLowered, PublicStack)):
        # a lock that keeps the suit symmetry is solved on the merged tree; one that breaks
        # it (locked rows under one card of a class and not the others, asymmetric ones
        # above) walks every outcome, as does one the merged tree cannot resolve (the
        # unmerged tree's resolution then says what is wrong)
        try:
            resolved, unresolved = symmetric_lock(lowered, lock), False
        except LockError:
            resolved, unresolved = None, True
        if resolved is None:
            why = ("a lock given as tables is the unmerged tree's" if isinstance(
                lock, Lock) else BREAKS_SYMMETRY)
            note = f"{why}: solved without isomorphism (every chance outcome walked)"
            if status is not None and not unresolved:
                status.note(note)
            lowered = lower_public_reporting(game, status, name=name,
                                             memory_budget=memory_budget, merges=False,
                                             **state)
            lowered = _bucketed(lowered, options)
            if unresolved:           # its error, if the unmerged tree has one too, not a note
                resolved = (resolve_stack_lock(lowered, lock, getattr(
                    options, "member_labels", None)) if isinstance(lowered, PublicStack)
                    else resolve_lock(lowered, lock))
                if status is not None:
                    status.note(note)
    stacked = isinstance(lowered, PublicStack)
    if stacked and lock is not None and resolved is None:
        # each merged member keeps its tree where the lock keeps its symmetry; the others
        # are lowered again walking every outcome (jaxcfr.api.locks.locked_stack)
        labels = getattr(options, "member_labels", None)
        lowered, resolved, unmerged = locked_stack(lowered, lock, labels)
        if unmerged and status is not None:
            status.note(unmerged_note(lowered, unmerged, labels))
    per_member = getattr(options, "per_member", False)
    if per_member and not stacked:
        raise ArgumentError("per-member parameters take a stack of public trees, not one "
                            "game", spell("combine"))
    runner = Runner(lowered, options.solver, options.parameters, precision=options.precision,
                    chunk=options.device.chunk,
                    compilation_cache=options.device.compilation_cache,
                    per_member=per_member,
                    overlap_evaluation=_overlap_fits(lowered, state, memory_budget))
    if lock is not None:                     # node locking (jaxcfr.api.locks)
        runner.set_lock(resolved if resolved is not None else
                        resolve_stack_lock(lowered, lock, getattr(options, "member_labels",
                                                                  None))
                        if stacked else resolve_lock(lowered, lock))
    return runner


def _overlap_fits(lowered, state: dict[str, int], budget: int | None) -> bool:
    """Whether the memory budget holds the evaluation's warm-up beside the first chunks
    for a public tree (:func:`jaxcfr.lowering.public.evaluation_overlap_fits`) or a stack
    of them (:func:`jaxcfr.lowering.public_stack.stack_overlap_fits`), with a solver
    state of ``state`` (:meth:`jaxcfr.solvers.solver.Solver.state_size`)."""
    budget = default_memory_budget() if budget is None else int(budget)
    if isinstance(lowered, PublicStack):
        return stack_overlap_fits(lowered, budget, **state)
    return evaluation_overlap_fits(lowered.public_size, budget, **state)
