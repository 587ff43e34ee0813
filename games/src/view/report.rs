//! What a game adds to `kingmaker report`: sections of text, tables and charts, which the report
//! draws ([`crate::view::GameView::report`]).

/// One section of the report.
pub struct Section {
    /// Its heading.
    pub title: String,
    /// What it shows, in order.
    pub parts: Vec<Part>,
}

/// One piece of a section.
pub enum Part {
    /// A subheading.
    Heading(String),
    /// A paragraph of plain text.
    Text(String),
    /// A table. With `row_heads`, each row's first cell is its heading; `folded` tables are
    /// shown under "the numbers", closed.
    Table {
        /// The column headings (none: no heading row).
        head: Vec<String>,
        /// The rows' cells.
        rows: Vec<Vec<String>>,
        /// Whether each row's first cell is its heading.
        row_heads: bool,
        /// Whether the table starts folded.
        folded: bool,
    },
    /// Bars of one or more series over 0, 1, 2, ... (a log scale: counts span many decades).
    Bars {
        /// The chart's title.
        title: String,
        /// What the x axis counts.
        x: String,
        /// What the y axis counts.
        y: String,
        /// (name, value at 0, 1, 2, ...) per series.
        series: Vec<(String, Vec<u64>)>,
    },
    /// One line per series through its points.
    Lines {
        /// The chart's title.
        title: String,
        /// What the x axis measures.
        x: String,
        /// What the y axis measures.
        y: String,
        /// (name, points) per series.
        lines: Vec<(String, Vec<(f64, f64)>)>,
    },
}
