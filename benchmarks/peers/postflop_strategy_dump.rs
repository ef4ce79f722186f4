// postflop_strategy_dump.rs: runs b-inary/postflop-solver on one spot for N iterations and prints
// the average strategy of every decision node, through the turn and river cards, per hand; so
// that jaxcfr's holdem_spot can be compared with it node by node.
//
// Build beside pf_bench (see postflop_tree_dump.rs). Usage:
//   postflop_strategy_dump BOARD OOP_RANGE IP_RANGE POT STACK ITERATIONS [trace]
// ("trace": also "trace <iteration> <exploitability>" after every iteration; ITERATIONS 0: only
// "memory_usage <bytes> <compressed bytes>" (the game's own figure, before allocation) and
// "hands <oop> <ip>", for benchmarks/bench_public_stack.py)
// Sizes as the peer's example (pf_bench): "60%, e, a" / "2.5x" everywhere, river donk "50%",
// thresholds 1.5, 0.15, 0.1. Output: "ev <oop> <ip>", "br <oop> <ip>", "exploitability <x>",
// then per node "# node [<path>] player <p>" (path: actions and dealt cards, comma-separated)
// and one line per hand: "<hand> <p_1> ... <p_A>".
use postflop_solver::*;
use std::io::Write;

fn dump(g: &mut PostFlopGame, path: &mut Vec<String>, w: &mut impl Write) {
    if g.is_terminal_node() {
        return;
    }
    if g.is_chance_node() {
        let cards = g.possible_cards();
        for card in 0..52u8 {
            if cards & (1u64 << card) != 0 {
                let h = g.history().to_vec();
                g.play(card as usize);
                path.push(card_to_string(card).unwrap());
                dump(g, path, w);
                path.pop();
                g.apply_history(&h);
            }
        }
        return;
    }
    let p = g.current_player();
    let acts = g.available_actions();
    g.cache_normalized_weights();
    let strat = g.strategy();
    let hs = holes_to_strings(g.private_cards(p)).unwrap();
    let nh = hs.len();
    writeln!(w, "# node [{}] player {}", path.join(","), p).unwrap();
    for j in 0..nh {
        let v: Vec<String> = (0..acts.len()).map(|k| format!("{:.9}", strat[k * nh + j])).collect();
        writeln!(w, "{} {}", hs[j], v.join(" ")).unwrap();
    }
    for (a, act) in acts.iter().enumerate() {
        let h = g.history().to_vec();
        g.play(a);
        path.push(format!("{:?}", act));
        dump(g, path, w);
        path.pop();
        g.apply_history(&h);
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let board = a[1].as_str();
    let flop = flop_from_str(&board[0..6]).unwrap();
    let turn = if board.len() >= 8 { card_from_str(&board[6..8]).unwrap() } else { NOT_DEALT };
    let river = if board.len() >= 10 { card_from_str(&board[8..10]).unwrap() } else { NOT_DEALT };
    let state = if river != NOT_DEALT { BoardState::River } else if turn != NOT_DEALT {
        BoardState::Turn } else { BoardState::Flop };
    let card_config = CardConfig {
        range: [a[2].parse().unwrap(), a[3].parse().unwrap()], flop, turn, river };
    let bet_sizes = BetSizeOptions::try_from(("60%, e, a", "2.5x")).unwrap();
    let tree_config = TreeConfig {
        initial_state: state,
        starting_pot: a[4].parse().unwrap(),
        effective_stack: a[5].parse().unwrap(),
        rake_rate: 0.0,
        rake_cap: 0.0,
        flop_bet_sizes: [bet_sizes.clone(), bet_sizes.clone()],
        turn_bet_sizes: [bet_sizes.clone(), bet_sizes.clone()],
        river_bet_sizes: [bet_sizes.clone(), bet_sizes],
        turn_donk_sizes: None,
        river_donk_sizes: Some(DonkSizeOptions::try_from("50%").unwrap()),
        add_allin_threshold: 1.5,
        force_allin_threshold: 0.15,
        merging_threshold: 0.1,
    };
    let iterations: u32 = a[6].parse().unwrap();
    let mut game = PostFlopGame::with_config(card_config, ActionTree::new(tree_config).unwrap()).unwrap();
    if iterations == 0 {
        let (bytes, compressed) = game.memory_usage();
        println!("memory_usage {bytes} {compressed}");
        println!("hands {} {}", game.private_cards(0).len(), game.private_cards(1).len());
        return;
    }
    game.allocate_memory(false);
    let trace = a.get(7).map(|x| x == "trace").unwrap_or(false);
    let mut lines = Vec::new();
    for t in 0..iterations {
        solve_step(&game, t);
        if trace {
            lines.push(format!("trace {} {}", t + 1, compute_exploitability(&game)));
        }
    }
    finalize(&mut game);
    let ev = compute_current_ev(&game);
    let br = compute_mes_ev(&game);
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::new(out.lock());
    for l in &lines {
        writeln!(w, "{l}").unwrap();
    }
    writeln!(w, "ev {} {}", ev[0], ev[1]).unwrap();
    writeln!(w, "br {} {}", br[0], br[1]).unwrap();
    writeln!(w, "exploitability {}", compute_exploitability(&game)).unwrap();
    game.back_to_root();
    dump(&mut game, &mut Vec::new(), &mut w);
}
