//! `kingmaker deck`: Spot It decks from finite projective planes, and `kingmaker deck verify` for
//! any deck file. The mathematics lives in the kingmaker-designs crate (docs/decks.md).

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use kingmaker_coordinator::digits::human_bytes;
use kingmaker_designs::bound::{fewest_pictures, FewestPictures};
use kingmaker_designs::deck::Deck;
use kingmaker_designs::parse::parse_bytes;
use kingmaker_designs::plane::Plane;
use kingmaker_designs::svg::Drawer;
use kingmaker_designs::verify::{count, verify_expecting, Expect, Report};
use kingmaker_tablefmt::fsio::{destination, read_bounded, read_capped, Existing};
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct DeckArgs {
    #[command(subcommand)]
    pub command: Option<DeckCommand>,
    /// The order n of the projective plane: n² + n + 1 cards of n + 1 pictures, out of n² + n + 1
    /// pictures. A prime power from 2 to 256 (2, 3, 4, 5, 7, 8, 9, 11, …).
    #[arg(long, required = true)]
    pub order: Option<u64>,
    /// Keep only the first K cards (the published deck: --order 7 --cards 55).
    #[arg(long, value_name = "K")]
    pub cards: Option<usize>,
    /// Drop the pictures that no kept card shows, and renumber the others from 0.
    #[arg(long)]
    pub drop_unused: bool,
    /// Print JSON: the field, the verification, the fewest-pictures bound and the cards.
    #[arg(long)]
    pub json: bool,
    /// Also write one SVG per card and index.html (every card, and a pair view) into DIR.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum DeckCommand {
    /// Check a deck file: every two cards share exactly one picture, every card shows as many
    /// pictures; names the first offending pair. Exits non-zero when the deck is not valid.
    Verify(VerifyDeckArgs),
}

#[derive(Args, Debug)]
pub struct VerifyDeckArgs {
    /// The deck: JSON {"cards": [[0, 1, 2], ...]} or text, one card per line, ids separated by
    /// spaces or commas (`#` starts a comment). `-` reads standard input.
    pub file: PathBuf,
    /// Also require this many cards.
    #[arg(long, value_name = "K")]
    pub cards: Option<usize>,
    /// Also require this many pictures on every card.
    #[arg(long, value_name = "M")]
    pub per_card: Option<usize>,
    /// Also require this many distinct pictures.
    #[arg(long, value_name = "V")]
    pub pictures: Option<usize>,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DeckArgs) -> Result<()> {
    match args.command {
        Some(DeckCommand::Verify(v)) => run_verify(v),
        None => run_build(args),
    }
}

fn run_build(args: DeckArgs) -> Result<()> {
    let order = args.order.context("--order is required")?;
    if let Some(dir) = &args.svg {
        check_svg_dir(dir)?;
    }
    let plane = Plane::new(order)?;
    let mut deck = Deck::from_plane(&plane);
    let total = deck.cards().len();
    if let Some(k) = args.cards {
        if k > total {
            bail!("cannot keep {k} cards: PG(2, {order}) has {total}");
        }
        deck.keep(k)?;
    }
    if args.drop_unused {
        deck.drop_unused();
    }
    let k = deck.cards().len();
    let m = order as usize + 1;
    let expect = Expect {
        cards: Some(k),
        per_card: Some(m),
        pictures: None,
    };
    let report = verify_expecting(deck.cards(), &expect);
    if !report.valid {
        bail!("the deck built from PG(2, {order}) does not verify (a bug): {report}");
    }
    let bound = fewest_pictures(k as u64, m as u64).expect("cards of at least 3 pictures");
    let field = plane.field();
    let field_name = if field.degree() == 1 {
        format!("GF({})", field.order())
    } else {
        format!(
            "GF({}) = GF({})[x]/({})",
            field.order(),
            field.characteristic(),
            field.modulus_string()
        )
    };

    if let Some(dir) = &args.svg {
        write_svg(
            &deck,
            dir,
            &format!(
                "Spot It deck: PG(2, {order}) over {field_name}, {} of {}",
                count(k, "card", "cards"),
                count(m, "picture", "pictures")
            ),
        )?;
    }
    if args.json {
        let value = json!({
            "order": order,
            "field": {
                "order": field.order(),
                "characteristic": field.characteristic(),
                "degree": field.degree(),
                "modulus": field.modulus_string(),
            },
            "plane_cards": total,
            "cards_kept": k,
            "per_card": m,
            "pictures": deck.pictures(),
            "pictures_used": report.pictures,
            "verification": report,
            "fewest_pictures": bound,
            "cards": deck.cards(),
        });
        println!("{}", serde_json::to_string(&value)?);
        return Ok(());
    }
    let mut out = String::new();
    out.push_str(&format!(
        "# PG(2, {order}) over {field_name}: {k} of {total} cards, {m} pictures per card, picture ids 0–{}\n",
        deck.pictures().saturating_sub(1)
    ));
    out.push_str(&format!("# verified: {report}\n"));
    out.push_str(&format!(
        "# {}; this deck shows {}\n",
        bound_sentence(&bound, report.pictures),
        report.pictures
    ));
    out.push_str(&deck.to_text());
    print!("{out}");
    Ok(())
}

/// "fewest pictures possible for 55 cards of 8: 57 (…)", with what a deck of `shown` pictures
/// adds to the constructions.
fn bound_sentence(b: &FewestPictures, shown: usize) -> String {
    let mut b = b.clone();
    if (shown as u64) < b.upper {
        b.upper = shown as u64;
        b.construction = "this deck".into();
        b.exact = (b.lower == b.upper).then_some(b.upper);
    }
    let head = format!(
        "fewest pictures possible for {} of {}",
        count(b.cards as usize, "card", "cards"),
        b.per_card
    );
    match b.exact {
        Some(v) if b.only_pencils => format!(
            "{head}: {v} (more than m² − m + 1 cards: only a pencil, one picture on every card, is possible)"
        ),
        Some(v) => format!(
            "{head}: {v} (counting bound {}, reached by {})",
            b.lower, b.construction
        ),
        None => format!(
            "{head}: at least {} by counting, at most {} ({})",
            b.lower, b.upper, b.construction
        ),
    }
}

/// Whether `name` is a file `--svg` writes: `index.html` or `card-NNN.svg`.
fn of_a_drawing(name: &str) -> bool {
    name == "index.html"
        || name
            .strip_prefix("card-")
            .and_then(|n| n.strip_suffix(".svg"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Refuse `--svg DIR` before anything is drawn unless DIR is new, empty, or holds a deck's
/// drawing (`index.html`, `card-NNN.svg`), which is replaced: never a file, a device, or a
/// directory of other files.
fn check_svg_dir(dir: &Path) -> Result<()> {
    let kind = match destination(dir)? {
        Existing::Nothing => return Ok(()),
        Existing::Dir => {
            let entries =
                std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
            for entry in entries {
                let name = entry
                    .with_context(|| format!("reading {}", dir.display()))?
                    .file_name();
                if !of_a_drawing(&name.to_string_lossy()) {
                    bail!(
                        "{} holds {:?}, which is no file of a deck's drawing: --svg writes into a new \
                         or empty directory (or one holding an earlier drawing, which it replaces)",
                        dir.display(),
                        name
                    );
                }
            }
            return Ok(());
        }
        Existing::File => "a file",
        Existing::Other(kind) => kind,
    };
    bail!(
        "{} is {kind}, not a directory: --svg names the directory to draw the cards into",
        dir.display()
    )
}

fn write_svg(deck: &Deck, dir: &Path, title: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // An earlier drawing's cards go (it may have had more, or other numbers).
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        if path
            .file_name()
            .is_some_and(|n| of_a_drawing(&n.to_string_lossy()))
        {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    let files = Drawer::new(deck).files(title);
    for (name, content) in &files {
        let path = dir.join(name);
        std::fs::write(&path, content).with_context(|| format!("writing {}", path.display()))?;
    }
    eprintln!(
        "wrote {} card SVGs and index.html to {}",
        files.len() - 1,
        dir.display()
    );
    Ok(())
}

/// The most a deck file may hold: the largest deck `kingmaker deck` writes (order 256, 65,793
/// cards of 257 pictures) is about 115 MB as JSON.
const DECK_CAP: u64 = 256 << 20;

/// The bytes of the deck `file` (`-`: standard input), refused beyond [`DECK_CAP`] as soon as
/// that many are read: `/dev/zero` is an error, not the whole memory. A regular file is refused
/// by its size, a directory before it is opened.
fn read_deck(file: &Path) -> Result<Vec<u8>> {
    let name = file.display().to_string();
    let too_large = || {
        anyhow::anyhow!(
            "{name}: more than the {} a deck may be (the largest deck `kingmaker deck` writes, \
             order 256, is about 115 MB)",
            human_bytes(DECK_CAP).replace(".0 ", " ")
        )
    };
    let read = if name == "-" {
        read_capped(std::io::stdin().lock(), DECK_CAP)
            .context("reading the deck from standard input")?
    } else {
        match destination(file)? {
            Existing::Dir | Existing::Nothing | Existing::File => {}
            // A pipe or a device is read as a stream, up to the cap.
            Existing::Other(_) => {
                let f = std::fs::File::open(file).with_context(|| format!("reading {name}"))?;
                return read_capped(f, DECK_CAP)
                    .with_context(|| format!("reading {name}"))?
                    .ok_or_else(too_large);
            }
        }
        Some(read_bounded(file, DECK_CAP, "a deck").with_context(|| format!("reading {name}"))?)
    };
    read.ok_or_else(too_large)
}

fn run_verify(args: VerifyDeckArgs) -> Result<()> {
    let name = args.file.display().to_string();
    let bytes = read_deck(&args.file)?;
    let deck = parse_bytes(&bytes).with_context(|| format!("{name}: not a deck"))?;
    let expect = Expect {
        cards: args.cards,
        per_card: args.per_card,
        pictures: args.pictures,
    };
    let report: Report = verify_expecting(deck.cards(), &expect);
    let bound = report
        .per_card
        .and_then(|m| fewest_pictures(report.cards as u64, m as u64));
    if args.json {
        let value = json!({ "file": name, "verification": report, "fewest_pictures": bound });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{name}: {report}");
        if let (true, Some(b)) = (report.valid, &bound) {
            println!(
                "{}; this deck shows {}",
                bound_sentence(b, report.pictures),
                report.pictures
            );
        }
    }
    match &report.violation {
        None => Ok(()),
        Some(v) => bail!("{name} is not a valid deck: {v}"),
    }
}
