//! The cc3p pictures: cell names of levels 1–3, the start and its moves at levels 1 and 2.
//!
//! `cargo run -p kingmaker-games --example cc3p_pictures`. What the docs show of these is checked
//! by `notation_doc_matches` in the cc3p tests.

use kingmaker_games::cc3p::{cell_name_picture, Cc3p};

fn main() {
    for level in 1..=3 {
        println!("{}", cell_name_picture(level));
    }
    for level in [1, 2] {
        let g = Cc3p::new(level).expect("an indexed level");
        let s = g.start_index();
        println!("{}\n{}", g.format_position(s), g.picture(s));
        for (text, child) in g.moves(s) {
            println!("{text}  {}", g.format_position(child));
        }
    }
}
