"""``jaxcfr solve holdem_spot(...) --boards SPEC``: one hold'em spot on many boards, solved
as a stack in one compiled step (:func:`jaxcfr.api.public_stack.solve_public_stack`), with a
per-board table of values and exploitability in chips and in percent of the pot, or one JSON
object (``--json``).

The spec (``river:Td9d6h5c``, ``turn:Td9d6h``, ``random:64``, ``Td9d6h5c2s,Td9d6h5c3s``)
and the spot's parameters are checked, and the spots built, before JAX is imported
(:func:`boards_spots`), and so are the solver's parameters per board (``--per-board
alpha=1.5,2,3``: :func:`per_board_settings`); :func:`run_boards` solves and prints."""

from __future__ import annotations

import json
import sys

import numpy as np

from jaxcfr._util.arguments import ArgumentError
from jaxcfr.runs.progress import percent

__all__ = ["boards_spots", "per_board_settings", "run_boards"]

#: ``jaxcfr solve`` options a stack of boards does not take, with the reason.
_REFUSED = {"grid": ("--grid", "a grid is of one spot: solve that board on its own"),
            "grid_out": ("--grid-out", "a grid is of one spot: solve that board on its own"),
            "counts": ("--counts", "a stack is solved by exact passes")}


def boards_spots(args) -> tuple[list[str], list]:
    """``(boards, spots)``: the boards ``args.boards`` names and one ``HoldemSpot`` per
    board with the other parameters of ``args.game`` (which must be a ``holdem_spot``; its
    own ``board``, if any, is replaced). JAX-free: every mistake is an
    :class:`ArgumentError` naming ``--boards`` or the game."""
    from jaxcfr.game.strings import GameError, parse_game_string
    for key, (flag, why) in _REFUSED.items():
        if getattr(args, key, None) not in (None, False):
            raise ArgumentError(f"--boards solves a stack of spots; {flag} is not taken with "
                                f"it ({why})", argument=flag)
    if args.alternating is not None:
        raise ArgumentError("--boards runs the preset's order of updates: leave out "
                            "--alternating and --simultaneous", argument="--boards")
    if args.sampling != "none" or args.chance == "sampled":
        raise ArgumentError("--boards solves a stack of spots by exact passes: leave out "
                            "--sampling and --chance sampled", argument="--boards")
    try:
        name, params = parse_game_string(args.game.strip())
    except GameError as e:
        raise ArgumentError(f"--boards: {e}", argument="--boards") from None
    if name != "holdem_spot" or params.get("tree", "public") != "public":
        raise ArgumentError(f"--boards takes a hold'em spot (holdem_spot(...)), got "
                            f"{args.game!r}", argument="--boards")
    params.pop("tree", None)
    params.pop("board", None)
    from jaxcfr_games.holdem.boards import parse_boards
    from jaxcfr_games.holdem.cards import HoldemError
    try:
        boards = parse_boards(args.boards)
    except HoldemError as e:
        raise ArgumentError(f"--boards: {e}", argument="--boards") from None
    spots = _Spots(boards, params, args.game)
    spots[0]                 # the spot's parameters checked on the first board now; the
    return boards, spots     # rest built in run_boards, once the stack is known to fit


def per_board_settings(texts: list[str], boards: list[str], algorithm: str,
                       shared: dict) -> dict[str, list]:
    """The solver's parameters per board that ``--per-board NAME=X,X,...`` options
    (``texts``) give: ``{name: [one value per board, in the order of boards]}``, each value
    checked by its parameter's rule for preset ``algorithm`` (its declared name or its
    command-line spelling: ``gamma_drop``, ``gamma-drop``; ``[1.5,2,3]`` is read too).
    ``shared``: the parameters given once for every board (``--alpha 2``; ``None``: not
    given), which a name may not repeat. JAX-free: every mistake is an
    :class:`ArgumentError` naming ``--per-board``, the parameter and, for a value, its
    board."""
    from jaxcfr.solvers.names import PRESET_PARAMETERS, check_named_parameters
    takes = PRESET_PARAMETERS[algorithm]
    batched = [k for k, v in shared.items() if isinstance(v, list)]
    if batched:
        flag = "--" + batched[0].replace("_", "-")
        hint = (f"; --per-board {batched[0]}=X,X,... gives one value per board"
                if batched[0] in takes else "")
        raise ArgumentError(f"--boards runs one setting of {flag} on every board, got a "
                            f"list{hint}", argument=flag)
    out: dict[str, list] = {}
    for text in texts:
        name, sep, values = text.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise ArgumentError(f"--per-board {text!r}: expected NAME=X,X,... with one value "
                                f"per board (e.g. alpha=1.5,2,3)", argument="--per-board")
        if name not in takes:
            raise ArgumentError(f"--per-board {text!r}: {algorithm} takes no parameter "
                                f"{name!r}; it takes {', '.join(takes) or 'none'}",
                                argument="--per-board")
        if name in out or shared.get(name) is not None:
            twice = "--per-board" if name in out else "--" + name.replace("_", "-")
            raise ArgumentError(f"--per-board {name}: given twice (also by {twice}); give "
                                f"each parameter once", argument="--per-board")
        items = values.strip()
        if items.startswith("[") and items.endswith("]"):
            items = items[1:-1]
        items = [x.strip() for x in items.split(",")]
        if len(items) != len(boards):
            raise ArgumentError(
                f"--per-board {name}: {len(items)} value{'s' * (len(items) != 1)} for "
                f"{len(boards)} board{'s' * (len(boards) != 1)}; give one per board, in the "
                f"order of --boards "
                f"({_shown_boards(boards)})", argument="--per-board")
        parsed = []
        for b, (item, board) in enumerate(zip(items, boards)):
            where = f"--per-board {name}: value {b + 1} of {len(boards)} (board {board})"
            value = _number(item)
            if value is None:
                raise ArgumentError(f"{where}: {item!r} is not a number",
                                    argument="--per-board")
            check_named_parameters(algorithm, {name: value}, seed=False,
                                   spell=lambda n, where=where: where)
            parsed.append(value)
        out[name] = parsed
    return out


def _number(text: str) -> int | float | None:
    """``"2"`` -> 2, ``"1.5"`` -> 1.5 (as ``--alpha`` reads a number), else ``None``."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None


def _shown_boards(boards: list[str], most: int = 6) -> str:
    shown = ", ".join(boards[:most])
    return shown + (f", ... {len(boards) - most} more" if len(boards) > most else "")


class _Spots:
    """The spot on each board, built when first asked for (``len`` is the boards'): a
    stack too large for the memory budget is refused after its first spot, not after
    building every one. A board the spot cannot take raises :class:`ArgumentError`
    naming the board (``--boards: board ...``), parameters no board takes naming ``game``."""

    def __init__(self, boards: list[str], params: dict, game: str):
        self.boards, self.params, self.game, self._built = boards, params, game, {}

    def __len__(self) -> int:
        return len(self.boards)

    def __getitem__(self, b: int):
        if b not in self._built:
            from jaxcfr_games.holdem.boards import board_spots
            from jaxcfr_games.holdem.cards import BoardError
            try:
                self._built[b] = board_spots(self.boards[b:b + 1], **self.params)[0]
            except BoardError as e:              # this board's: another may take the spot
                raise ArgumentError(f"--boards: board {self.boards[b]}: {e}",
                                    argument="--boards") from None
            except (ValueError, TypeError) as e:  # the spot's parameters (on any board)
                raise ArgumentError(f"{self.game}: {e}", argument="--boards") from None
        return self._built[b]

    def __iter__(self):
        return (self[b] for b in range(len(self)))


def run_boards(args, boards: list[str], spots, parameters: dict, lock=None,
               per_board: dict | None = None) -> int:
    """Solve ``spots`` (one per board) as one stack with ``args``' solver options and the
    traced ``parameters`` (scalars: one setting for every board) and ``per_board``
    (:func:`per_board_settings`: one value per board, laid along the stack's members in
    the same compiled step), under ``lock`` (a lock file's entries,
    :func:`jaxcfr.api.locks.resolve_stack_lock`: on every board where its nodes exist, or
    on the board an entry's ``member`` names), then print the table or the JSON object.
    Called once JAX may be imported."""
    from jaxcfr.api.public_stack import solve_public_stack
    per_board = dict(per_board or {})
    given = {k: v for k, v in parameters.items() if v is not None}
    pot = float(spots[0].pot)
    if not args.quiet:
        print(f"jaxcfr: lowering and stacking {len(spots):,} spots, compiling "
              f"{args.algorithm} once for the stack", file=sys.stderr, flush=True)
    stack = stacked(spots, args.algorithm, args.precision)

    def callback(record):                       # progress on stderr, one line an evaluation
        if not args.quiet and record["exploitability_pot_percent"] is not None:
            pct = np.asarray(record["exploitability_pot_percent"], np.float64)   # [B]
            print(f"iteration {record['iteration']:>8}  exploitability {percent(pct.mean())} "
                  f"of the pot on average, {percent(pct.max())} at most", file=sys.stderr,
                  flush=True)
    result = solve_public_stack(stack, args.algorithm, args.iterations,
                                precision=args.precision, eval_every=args.eval_every,
                                target=args.target, callback=callback, lock=lock,
                                member_labels=tuple(boards), per_member=bool(per_board),
                                note=None if args.quiet else (lambda line: print(
                                    f"jaxcfr: {line}", file=sys.stderr, flush=True)),
                                **given, **per_board)
    final = result.final
    exploit = np.asarray(final["exploitability"], np.float64)          # [B]
    values = np.asarray(final["values"], np.float64)                   # [B, 2]
    pots = np.array([float(s.pot) for s in spots])                     # [B]
    out = {"game": args.game, "boards": boards, "algorithm": result.solver.name,
           "iterations": args.iterations, "precision": args.precision, "pot": pot,
           "exploitability": exploit.tolist(),
           "exploitability_pot_percent": (100 * exploit / pots).tolist(),
           "values": values.tolist(),
           "values_pot_percent": (100 * values / pots[:, None]).tolist(),
           "seconds": result.seconds, "compile_seconds": result.compile_seconds,
           "iterations_per_second": result.iterations_per_second,
           "iteration": final["iteration"]}
    if args.target is not None:
        out["target"] = args.target
        out["reached_target"] = result.reached_target
    if args.lock is not None:                 # the metrics are the restricted games'
        out["lock"] = args.lock
    if per_board:                             # each board's own settings, [B] each
        out["per_board"] = per_board
    if args.json:
        print(json.dumps(out))
        return 0
    width = max(5, max(len(b) for b in boards))
    names = {k: max(8, len(k)) for k in per_board}           # a column per parameter given
    print(f"{'board':<{width}}  " + "".join(f"{k:>{w}}  " for k, w in names.items())
          + f"{'exploitability':>14}  {'% of pot':>9}  {'value OOP':>10}  {'value IP':>10}")
    for b, board in enumerate(boards):
        share = out["exploitability_pot_percent"][b]
        print(f"{board:<{width}}  " + "".join(f"{per_board[k][b]:>{w}g}  "
                                               for k, w in names.items())
              + f"{exploit[b]:>14.6g}  {percent(share):>9}"
              f"  {values[b, 0]:>10.4f}  {values[b, 1]:>10.4f}")
    pct = np.asarray(out["exploitability_pot_percent"])
    print(f"{len(boards)} board{'s' * (len(boards) != 1)}, pot {pot:g}: exploitability "
          f"{percent(pct.mean())} of the pot on average, {percent(pct.max())} at most "
          f"({boards[int(pct.argmax())]}); values in chips")
    print(f"speed  {result.iterations_per_second:,.1f} iterations/s of the whole stack "
          f"(compile {result.compile_seconds:.2f} s)")
    if args.target is not None:
        from jaxcfr.cli.options import target_line
        print(target_line(result.reached_target, final, args.target, several=True))
    return 0


def stacked(spots, algorithm: str = "postflop-dcfr", precision: str = "float32"):
    """The spots as one :class:`~jaxcfr.lowering.public_stack.PublicStack` with their pots
    (each board's exploitability in percent of its pot); every spot lowered once, on its
    merged (suit-isomorphic) tree as one spot is, by
    :func:`jaxcfr.lowering.public_stack.lower_stack` (a stack over the memory budget,
    counted with the state of ``algorithm`` in ``precision``, refused after at most 16
    spots; the dense members of a stack of ranked and dense ones lowered again ranked),
    as ``jaxcfr train`` does (:func:`jaxcfr.runs.train.public_stack`)."""
    import dataclasses
    from jaxcfr.lowering import public as lowering
    from jaxcfr.lowering.public_stack import StackError, lower_stack
    from jaxcfr.solvers.presets import make_solver

    def lowered_at(b: int, terminals: str = "auto", merges: bool = True):
        return lowering.lower_public(spots[b], merges=merges, terminals=terminals)
    try:
        stack = lower_stack(lowered_at, len(spots), what="spots",    # (MemoryBudgetError)
                            **make_solver(algorithm).state_size(precision))
    except StackError as e:
        raise ArgumentError(f"--boards: {e}", argument="--boards") from None
    return dataclasses.replace(stack, pots=tuple(float(s.pot) for s in spots))
