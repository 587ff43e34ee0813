//! Deck benchmarks (a bench binary: `cargo bench -p kingmaker-designs --bench deck`).
//!
//! Reports the time to build GF(101), PG(2, 101) as a deck (10,303 cards of 102 pictures) and to
//! verify it fully (every pair of cards shares exactly one picture), best of a few runs, plus a few
//! other orders for the shape of the curve, and pencils of 200,000 and 1,000,000 cards.

use kingmaker_designs::deck::Deck;
use kingmaker_designs::plane::Plane;
use kingmaker_designs::verify::verify;
use std::time::{Duration, Instant};

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let x = f();
        best = best.min(t.elapsed());
        out = Some(x);
    }
    (best, out.unwrap())
}

fn main() {
    println!("order  cards  pictures/card  build (field + plane)  verify   total");
    for order in [7u64, 31, 64, 101, 127] {
        let (build, deck) = best_of(3, || Deck::from_plane(&Plane::new(order).unwrap()));
        let (check, report) = best_of(3, || verify(deck.cards()));
        assert!(report.valid, "PG(2,{order}): {report}");
        assert_eq!(report.projective_plane_order, Some(order as usize));
        println!(
            "{order:>5}  {:>5}  {:>13}  {:>21.1?}  {:>6.1?}  {:>6.1?}",
            deck.cards().len(),
            order + 1,
            build,
            check,
            build + check
        );
    }
    // Pencils: one picture on every card, two of its own on each (what every deck of more than
    // m² − m + 1 cards is). Checked by pairs of pictures, a few steps per incidence.
    println!("pencil cards  pictures/card  verify");
    for k in [200_000u32, 1_000_000] {
        let cards: Vec<Vec<u32>> = (0..k).map(|i| vec![0, 2 * i + 1, 2 * i + 2]).collect();
        let (check, report) = best_of(3, || verify(&cards));
        assert!(report.valid, "pencil of {k}: {report}");
        println!("{k:>12}  {:>13}  {check:>6.1?}", 3);
    }
}
