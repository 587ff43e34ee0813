//! Go on the plane written again from the rules, on `Vec`s and coordinates, sharing no code with
//! the module: moves, captures, suicide, ko, passes and area scoring.

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct St {
    pub cells: Vec<u8>, // 0 empty, 1 Black, 2 White
    pub black_to_move: bool,
    pub passed: bool,
    pub over: bool,
    pub ko: Option<usize>,
}

pub struct Plane {
    pub rows: usize,
    pub cols: usize,
}

impl Plane {
    fn nbrs(&self, p: usize) -> Vec<usize> {
        let (r, c) = (p / self.cols, p % self.cols);
        let mut v = Vec::new();
        if r > 0 {
            v.push(p - self.cols);
        }
        if r + 1 < self.rows {
            v.push(p + self.cols);
        }
        if c > 0 {
            v.push(p - 1);
        }
        if c + 1 < self.cols {
            v.push(p + 1);
        }
        v
    }

    /// The group of the stone on p and its number of liberties.
    fn group(&self, cells: &[u8], p: usize) -> (Vec<usize>, usize) {
        let mut group = vec![p];
        let mut libs = Vec::new();
        let mut k = 0;
        while k < group.len() {
            for q in self.nbrs(group[k]) {
                if cells[q] == cells[p] && !group.contains(&q) {
                    group.push(q);
                } else if cells[q] == 0 && !libs.contains(&q) {
                    libs.push(q);
                }
            }
            k += 1;
        }
        (group, libs.len())
    }

    pub fn children(&self, s: &St) -> Vec<St> {
        let mut out = Vec::new();
        if s.over {
            return out;
        }
        let me = if s.black_to_move { 1 } else { 2 };
        for x in 0..s.cells.len() {
            if s.cells[x] != 0 || s.ko == Some(x) {
                continue;
            }
            let mut cells = s.cells.clone();
            cells[x] = me;
            let mut captured = Vec::new();
            for q in self.nbrs(x) {
                if cells[q] == 3 - me {
                    let (group, libs) = self.group(&cells, q);
                    if libs == 0 {
                        for &y in &group {
                            if !captured.contains(&y) {
                                captured.push(y);
                            }
                        }
                    }
                }
            }
            for &y in &captured {
                cells[y] = 0;
            }
            let (group, libs) = self.group(&cells, x);
            if libs == 0 {
                continue;
            }
            let ko = (captured.len() == 1 && group.len() == 1 && libs == 1).then(|| captured[0]);
            out.push(St {
                cells,
                black_to_move: !s.black_to_move,
                passed: false,
                over: false,
                ko,
            });
        }
        out.push(St {
            cells: s.cells.clone(),
            black_to_move: !s.black_to_move,
            passed: true,
            over: s.passed,
            ko: None,
        });
        out
    }

    pub fn score(&self, cells: &[u8]) -> i32 {
        let mut score = 0i32;
        let mut seen = vec![false; cells.len()];
        for p in 0..cells.len() {
            match cells[p] {
                1 => score += 1,
                2 => score -= 1,
                _ if !seen[p] => {
                    let mut region = vec![p];
                    seen[p] = true;
                    let (mut b, mut w) = (false, false);
                    let mut k = 0;
                    while k < region.len() {
                        for q in self.nbrs(region[k]) {
                            match cells[q] {
                                0 if !seen[q] => {
                                    seen[q] = true;
                                    region.push(q);
                                }
                                1 => b = true,
                                2 => w = true,
                                _ => {}
                            }
                        }
                        k += 1;
                    }
                    if b && !w {
                        score += region.len() as i32;
                    } else if w && !b {
                        score -= region.len() as i32;
                    }
                }
                _ => {}
            }
        }
        score
    }

    pub fn text(&self, s: &St) -> String {
        let rows: Vec<String> = s
            .cells
            .chunks(self.cols)
            .map(|row| {
                row.iter()
                    .map(|&v| [b'.', b'X', b'O'][v as usize] as char)
                    .collect()
            })
            .collect();
        let flag = if s.over {
            ":end".to_string()
        } else if s.passed {
            ":pass".to_string()
        } else if let Some(k) = s.ko {
            format!(
                ":ko={}{}",
                (b'a' + (k % self.cols) as u8) as char,
                k / self.cols + 1
            )
        } else {
            String::new()
        };
        format!(
            "{}:{}{flag}",
            rows.join("/"),
            if s.black_to_move { 'B' } else { 'W' }
        )
    }
}
