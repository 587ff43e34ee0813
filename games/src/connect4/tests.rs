//! Connect Four's own tests: the index, the rules against an independent minimax over a plain
//! grid, and John Tromp's published results for the smallest boards. The contract and the
//! notation's round trips are the conformance suite's (`games/src/conformance.rs`).

use super::*;
use crate::family::GameFamily;
use crate::notation::Notation;
use family::Connect4Params;
use kingmaker_kernel::{solve_in_memory, DRAW, LOSS, WIN};
use kingmaker_kernel::{Game, Node};
use std::collections::HashMap;
use std::sync::Arc;

#[test]
fn every_index_decodes_and_encodes_back() {
    let g = Connect4::new(3, 3, 3).unwrap();
    assert_eq!(g.size(), 15u64.pow(3));
    for i in 0..g.size() {
        assert_eq!(g.cols.encode(&g.cols.decode(i)), i);
    }
    assert!(
        Connect4::new(8, 8, 4).is_err(),
        "(2^9 - 1)^8 indices exceed 2^40"
    );
    assert!(Connect4::new(4, 4, 1).is_err());
}

#[test]
fn positions_read_as_written() {
    let g = Connect4::new(4, 4, 4).unwrap();
    let i = g.parse_position("..../..../.o../.xx.").unwrap();
    assert_eq!(g.format_position(i), "..../..../.O../.XX.");
    assert_eq!(g.node(i), Node::Live { mover: 1 });
    let moves: Vec<String> = g.moves(i).into_iter().map(|m| m.0).collect();
    assert_eq!(moves, ["1", "2", "3", "4"]);
    for (text, why) in [
        ("..../..../.X../....", "floats"),
        ("..../..../..../XX..", "X has 2 discs and O 0"),
        ("X.../X.../XO../XOOO", "already has 4 in a row"),
        ("..../..../....", "3 rows"),
        ("..../..../..../..Z.", "no disc"),
    ] {
        let err = g.parse_position(text).unwrap_err().to_string();
        assert!(err.contains(why), "{text}: {err}");
    }
    // O moved last and made four: O has won.
    let won = g.parse_position("O.../O.../OX../OXXX").unwrap();
    assert_eq!(g.node(won), Node::Terminal { outcome: 1 });
    let full = g.parse_position("OXOX/OXOX/XOXO/XOXO").unwrap();
    assert_eq!(
        g.node(full),
        Node::Terminal {
            outcome: DRAW_OUTCOME
        }
    );
    assert_eq!(g.outcome_text(DRAW_OUTCOME), "a draw: the board is full");
}

/// +1: X wins, 0: draw, −1: O wins, with best play, by plain minimax over a grid of rows (row 0
/// the bottom) that knows nothing of the index or of `rules.rs`.
fn minimax(
    grid: &mut Vec<Vec<u8>>,
    width: usize,
    height: usize,
    connect: usize,
    to_move: u8,
    memo: &mut HashMap<Vec<Vec<u8>>, i8>,
) -> i8 {
    if let Some(&v) = memo.get(grid) {
        return v;
    }
    let mut best: Option<i8> = None;
    for col in 0..width {
        let Some(row) = (0..height).find(|&r| grid[r][col] == 0) else {
            continue;
        };
        grid[row][col] = to_move + 1;
        let won = [(1i64, 0i64), (0, 1), (1, 1), (1, -1)]
            .iter()
            .any(|&(dc, dr)| {
                let run = |sign: i64| {
                    (1..connect as i64)
                        .take_while(|k| {
                            let (c, r) = (col as i64 + sign * dc * k, row as i64 + sign * dr * k);
                            (0..width as i64).contains(&c)
                                && (0..height as i64).contains(&r)
                                && grid[r as usize][c as usize] == to_move + 1
                        })
                        .count()
                };
                1 + run(1) + run(-1) >= connect
            });
        let v = if won {
            if to_move == 0 {
                1
            } else {
                -1
            }
        } else {
            minimax(grid, width, height, connect, 1 - to_move, memo)
        };
        grid[row][col] = 0;
        best = Some(match best {
            None => v,
            Some(b) if to_move == 0 => b.max(v),
            Some(b) => b.min(v),
        });
    }
    let v = best.unwrap_or(0);
    memo.insert(grid.clone(), v);
    v
}

/// The kernel's two layers, read as X wins / draw / O wins.
fn outcome(x_wins: &[u8], o_wins: &[u8], i: u64) -> i8 {
    match (x_wins[i as usize], o_wins[i as usize]) {
        (WIN, _) => 1,
        (LOSS, WIN) => -1,
        (LOSS, LOSS) => 0,
        other => panic!("state {i}: {other:?}"),
    }
}

/// Every position reachable from the start has the value plain minimax gives it.
#[test]
fn the_kernel_agrees_with_plain_minimax_on_every_reachable_position() {
    for (width, height, connect) in [(3, 3, 3), (4, 3, 3), (4, 4, 4)] {
        let params = Connect4Params {
            board: family::Board { width, height },
            connect,
        };
        let game = Arc::new(params.build().unwrap());
        let layers = params.layers();
        let x_wins = solve_in_memory(&game, &layers[0], 2).values;
        let o_wins = solve_in_memory(&game, &layers[1], 2).values;
        let (w, h) = (width as usize, height as usize);
        let mut memo = HashMap::new();
        minimax(
            &mut vec![vec![0; w]; h],
            w,
            h,
            connect as usize,
            0,
            &mut memo,
        );
        assert!(memo.len() > 100);
        for (grid, &v) in &memo {
            let text: Vec<String> = grid
                .iter()
                .rev()
                .map(|row| row.iter().map(|&c| ['.', 'X', 'O'][c as usize]).collect())
                .collect();
            let i = game.parse_position(&text.join("/")).unwrap();
            assert_eq!(outcome(&x_wins, &o_wins, i), v, "{}", text.join("/"));
        }
    }
}

/// John Tromp's table of Connect Four on small boards (width × height): 4×4, 5×4 and 4×5 are
/// draws. His table goes on to 6×4, a win for the second player on the 24th move; the CLI
/// builds it (docs/results.md).
#[test]
fn tromps_smallest_boards_are_draws() {
    for (width, height) in [(4, 4), (5, 4), (4, 5)] {
        let params = Connect4Params {
            board: family::Board { width, height },
            connect: 4,
        };
        let game = Arc::new(params.build().unwrap());
        let start = game.start_index().unwrap();
        let layers = params.layers();
        let x_wins = solve_in_memory(&game, &layers[0], 2);
        let o_wins = solve_in_memory(&game, &layers[1], 2);
        assert_eq!(
            outcome(&x_wins.values, &o_wins.values, start),
            0,
            "{width}x{height}"
        );
        assert_ne!(
            x_wins.values[start as usize], DRAW,
            "no cycles: all decided"
        );
    }
}
