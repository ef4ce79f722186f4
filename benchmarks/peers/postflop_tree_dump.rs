// postflop_tree_dump.rs: prints b-inary/postflop-solver's action trees for many spots, so that
// jaxcfr_games.holdem's bet tree can be checked against them (tests/test_holdem_tree.py).
//
// Build beside pf_bench (shared/peers/postflop-solver/build.sh), from the crate's root:
//   cp benchmarks/peers/postflop_tree_dump.rs BUILD_DIR/examples/ && cd BUILD_DIR &&
//   cargo build -q --release --offline --no-default-features --features rayon --example postflop_tree_dump
// Input (stdin), one spot a line, fields separated by '|':
//   state|pot|stack|flop_oop_bet|flop_oop_raise|flop_ip_bet|flop_ip_raise|turn (4)|river (4)|
//   turn_donk|river_donk|add_allin|force_allin|merging
// (state: flop, turn or river; a donk field '-' means None). Output, per spot: "SPOT <i>", then
// "ERROR <message>" or the tree in pre-order, one node a line, chance nodes skipped as the
// ActionTree's history skips them:
//   D <history> bets=[oop, ip] actions=[...]     a decision (C+D: just after a chance node)
//   T-fold / T-showdown <history> bets=[oop, ip] a terminal
// and "END <i>". A line "RANGE <text>" instead prints the range's nonzero weights as
// "<index>:<weight>" pairs (postflop-solver's 1,326 combination indices), or "ERROR <message>".
use postflop_solver::*;
use std::io::{BufRead, Write};

fn walk(t: &mut ActionTree, out: &mut Vec<String>) {
    let hist = format!("{:?}", t.history());
    let tb = t.total_bet_amount();
    if t.is_terminal_node() {
        let kind = if matches!(t.history().last(), Some(Action::Fold)) { "fold" } else { "showdown" };
        out.push(format!("T-{kind} {hist} bets={tb:?}"));
        return;
    }
    let tag = if t.is_chance_node() { "C+D" } else { "D" };
    out.push(format!("{tag} {hist} bets={tb:?} actions={:?}", t.available_actions()));
    let actions: Vec<Action> = t.available_actions().to_vec();
    for a in actions {
        t.play(a).unwrap();
        walk(t, out);
        t.undo().unwrap();
    }
}

fn sizes(bet: &str, raise: &str) -> Result<BetSizeOptions, String> {
    BetSizeOptions::try_from((bet, raise))
}

fn spot(f: &[&str]) -> Result<Vec<String>, String> {
    if f.len() != 20 {
        return Err(format!("expected 20 fields, got {}", f.len()));
    }
    let state = match f[0] {
        "flop" => BoardState::Flop,
        "turn" => BoardState::Turn,
        "river" => BoardState::River,
        s => return Err(format!("state {s}")),
    };
    let donk = |s: &str| -> Result<Option<DonkSizeOptions>, String> {
        if s == "-" { Ok(None) } else { DonkSizeOptions::try_from(s).map(Some) }
    };
    let config = TreeConfig {
        initial_state: state,
        starting_pot: f[1].parse().map_err(|_| "pot".to_string())?,
        effective_stack: f[2].parse().map_err(|_| "stack".to_string())?,
        rake_rate: 0.0,
        rake_cap: 0.0,
        flop_bet_sizes: [sizes(f[3], f[4])?, sizes(f[5], f[6])?],
        turn_bet_sizes: [sizes(f[7], f[8])?, sizes(f[9], f[10])?],
        river_bet_sizes: [sizes(f[11], f[12])?, sizes(f[13], f[14])?],
        turn_donk_sizes: donk(f[15])?,
        river_donk_sizes: donk(f[16])?,
        add_allin_threshold: f[17].parse().map_err(|_| "add_allin".to_string())?,
        force_allin_threshold: f[18].parse().map_err(|_| "force_allin".to_string())?,
        merging_threshold: f[19].parse().map_err(|_| "merging".to_string())?,
    };
    let mut tree = ActionTree::new(config)?;
    let mut out = Vec::new();
    walk(&mut tree, &mut out);
    Ok(out)
}

fn main() {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line.unwrap();
        if let Some(text) = line.strip_prefix("RANGE ") {
            writeln!(w, "SPOT {i}").unwrap();
            match text.parse::<Range>() {
                Ok(r) => {
                    let v: Vec<String> = r.raw_data().iter().enumerate()
                        .filter(|(_, &x)| x != 0.0).map(|(k, x)| format!("{k}:{x}")).collect();
                    writeln!(w, "{}", v.join(" ")).unwrap();
                }
                Err(e) => writeln!(w, "ERROR {e}").unwrap(),
            }
            writeln!(w, "END {i}").unwrap();
            continue;
        }
        let fields: Vec<&str> = line.split('|').collect();
        writeln!(w, "SPOT {i}").unwrap();
        match spot(&fields) {
            Ok(lines) => {
                for l in lines {
                    writeln!(w, "{l}").unwrap();
                }
            }
            Err(e) => writeln!(w, "ERROR {e}").unwrap(),
        }
        writeln!(w, "END {i}").unwrap();
    }
}
