// Kingmaker explorer: asks /api/info what game this is, then shows positions from
// /api/position?p=... — the board, who can force what, and every move with the labels after it —
// with the moves ordered best first by /api/v1/probe. Seats can be given to the computer, which
// plays the first (best) move, or, in 3-player Chinese Checkers, the move of the preference rule
// chosen.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
// lineK: the threshold whose principal line a Go position shows, once chosen (null: the default).
// history / future: the positions before this one and those taken back ({position, tag}), for
// undo, redo and the value trail. best: /api/v1/probe of this position. computer: the seats the
// computer plays. autoplayed: computer moves in a row (a guard against endless self-play).
const state = {
  info: null,
  data: null,
  best: null,
  selected: null,
  history: [],
  future: [],
  lineK: null,
  computer: new Set(),
  autoplayed: 0,
};
// Computer moves in a row before self-play pauses (a drawn game would go on forever).
const MAX_AUTOPLAY = 200;
const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.setAttribute("class", v);
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

async function api(path) {
  const response = await fetch(path);
  let body;
  try {
    body = await response.json();
  } catch (_) {
    body = { error: `HTTP ${response.status}` };
  }
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

const SOLO_WORDS = { W: "can force a win", L: "can be forced out", D: "can hold a draw", "-": "" };
const CLASS_NOTES = {
  terminal: "The game is over (or the placement cannot arise).",
  solo_win: "Someone can force a win alone.",
  spoiler_draw: "Nobody can force a win, but someone can stop the others from ever winning.",
  kingmaker: "Nobody can win alone and every player can be forced out by the other two: whoever hands a win decides who wins.",
};

async function init() {
  try {
    state.info = await api("api/info");
  } catch (e) {
    showError(`cannot reach the server: ${e.message}`);
    return;
  }
  const info = state.info;
  $("game-name").textContent = info.name;
  document.title = `Kingmaker: ${info.name}`;
  const rel = info.release;
  $("source").textContent = rel
    ? `release packed ${rel.packed_at} by kingmaker ${rel.kingmaker_version}; ${info.states.toLocaleString()} states`
    : `${info.source}; ${info.states.toLocaleString()} states`;
  $("legend").textContent =
    info.depths === false ? `${info.legend} These tables hold values alone (fetched with --values-only): no depths, no lines, and the computer does not play.` : info.legend;
  $("position-form").addEventListener("submit", (e) => {
    e.preventDefault();
    go($("position").value.trim() || "start");
  });
  $("start").addEventListener("click", () => go(info.start || "start"));
  $("back").addEventListener("click", undoToPlayer);
  $("redo").addEventListener("click", redo);
  renderSeats();
  renderFilter();
  window.addEventListener("hashchange", () => {
    const p = positionFromHash();
    if (p && state.data && p !== state.data.position) go(p);
  });
  if (info.start) $("position").placeholder = info.start;
  go(positionFromHash() || info.start || "start", false);
}

function positionFromHash() {
  const m = location.hash.match(/^#p=(.*)$/);
  return m ? decodeURIComponent(m[1]) : "";
}

async function go(position, remember = true) {
  let data, best;
  try {
    const p = encodeURIComponent(position);
    [data, best] = await Promise.all([api("api/position?p=" + p), api("api/v1/probe?position=" + p)]);
  } catch (e) {
    showError(e.message);
    return;
  }
  showError("");
  if (remember && state.data && state.data.position !== data.position) {
    state.history.push({ position: state.data.position, tag: tagOf(state.data) });
    state.future = [];
  }
  // The page's moves in the API's order, best first for the side to move.
  const rank = new Map(best.moves.map((m, i) => [m.move, { i, category: m.category, depth: m.depth }]));
  data.moves.forEach((m) => {
    m.best = rank.get(m.move);
  });
  data.moves.sort((a, b) => (a.best ? a.best.i : 1e9) - (b.best ? b.best.i : 1e9));
  state.data = data;
  state.best = best;
  state.selected = null;
  const hash = "#p=" + encodeURIComponent(data.position);
  if (location.hash !== hash) history.replaceState(null, "", hash);
  render();
}

function render() {
  const d = state.data;
  $("position").value = d.position;
  $("status").textContent = d.node.text;
  $("back").disabled = state.history.length === 0;
  $("redo").disabled = state.future.length === 0;
  renderBoard();
  renderKey();
  renderLabels();
  renderMoves();
  renderTrail();
  document.body.dataset.position = d.position;
  computerTurn();
}

// ---- play: undo and redo, the value trail, the computer's seats ----

// What the trail shows of a position: its class (3-player), W/L/D (two players) or score (Go);
// and who was to move there.
function tagOf(d) {
  const l = d.labels;
  const mover = d.node.mover;
  if (l.kind === "questions") {
    const letter = { kingmaker: "K", solo_win: "S", spoiler_draw: "D", terminal: "T" }[l.class] || "?";
    return { text: letter, kind: l.class, title: l.class.replace("_", " "), mover };
  }
  if (l.kind === "score") return { text: l.short, kind: "score", title: `score ${l.short}`, mover };
  return { text: l.value, kind: l.value, title: l.says, mover };
}

// Undo back to the last position where a seat the computer does not play was to move.
function undoToPlayer() {
  const h = state.history;
  let n = 1;
  while (n < h.length && state.computer.has(h[h.length - n].tag.mover)) n++;
  undo(n);
}

// Take back `n` moves (the taken-back positions can be replayed with redo).
function undo(n) {
  let target = null;
  for (let k = 0; k < n && state.history.length; k++) {
    state.future.push({ position: (target || state.data).position, tag: target ? target.tag : tagOf(state.data) });
    target = state.history.pop();
  }
  if (target) {
    state.autoplayed = 0;
    go(target.position, false);
  }
}

function redo() {
  const next = state.future.pop();
  if (!next) return;
  state.history.push({ position: state.data.position, tag: tagOf(state.data) });
  state.autoplayed = 0;
  go(next.position, false);
}

function renderTrail() {
  const box = $("trail");
  box.replaceChildren();
  const here = state.history.length;
  const entries = [...state.history, { position: state.data.position, tag: tagOf(state.data) }];
  entries.forEach((e, k) => {
    const back = here - k;
    box.append(
      el("button", {
        type: "button",
        class: "trail" + (back === 0 ? " here" : ""),
        "data-kind": e.tag.kind,
        "data-ply": k,
        title: `ply ${k}: ${e.tag.title}\n${e.position}`,
        text: e.tag.text,
        onclick: () => undo(back),
      }),
    );
  });
}

// The question filter of 3-player games: "A alone", "A hands the win to B", ...
function renderFilter() {
  const players = state.info.players;
  if (players.length !== 3) return;
  const q = $("filter-q");
  for (const p of players) {
    q.append(el("option", { value: `solo:${p}`, text: `${p} alone` }));
    for (const o of players.filter((o) => o !== p))
      q.append(el("option", { value: `enable:${p}:${o}`, text: `${p} hands the win to ${o}` }));
  }
  $("filter-row").hidden = false;
  q.addEventListener("change", renderMoves);
  $("filter-v").addEventListener("change", renderMoves);
}

// Whether move `m` passes the question filter (every move when none is chosen).
function passesFilter(m) {
  const q = $("filter-q").value;
  const l = m.labels;
  if (!q || l.kind !== "questions") return true;
  const [kind, p, o] = q.split(":");
  const answer = kind === "solo" ? l.solo[p] : l.enable[p][o];
  return answer.value === $("filter-v").value;
}

function renderSeats() {
  const box = $("seats");
  box.replaceChildren("Computer plays: ");
  // Best moves and the preference rules are chosen by depth: values alone cannot play.
  const canPlay = state.info.depths !== false;
  if (!canPlay) box.title = "values-only tables: the computer plays by depths, which they do not hold";
  for (const p of state.info.players) {
    const input = el("input", { type: "checkbox", id: `seat-${p}`, "data-player": p });
    input.disabled = !canPlay;
    input.addEventListener("change", () => {
      if (input.checked) state.computer.add(p);
      else state.computer.delete(p);
      state.autoplayed = 0;
      computerTurn();
    });
    box.append(el("label", { class: "seat" }, input, ` ${p}`));
  }
  $("rule-row").hidden = state.info.players.length !== 3;
  $("rule").addEventListener("change", () => state.data && renderLabels());
}

// If the side to move is the computer's, play its move after a short pause.
function computerTurn() {
  const d = state.data;
  if (!d || d.node.kind !== "live" || !state.computer.has(d.node.mover)) return;
  if (state.autoplayed >= MAX_AUTOPLAY) {
    showError(`the computer has played ${MAX_AUTOPLAY} moves in a row; self-play paused (take a seat or undo)`);
    return;
  }
  const at = d.position;
  setTimeout(() => {
    if (!state.data || state.data.position !== at || !state.computer.has(state.data.node.mover)) return;
    const m = chooseMove(state.best);
    if (!m) return;
    state.autoplayed += 1;
    go(m.child.position);
  }, 350);
}

// The computer's move: the first (best) move; in 3-player Chinese Checkers the move the chosen
// preference rule plays (docs/rules.md §1.4), as the server chose it with `kingmaker preferences`'s
// own code (the labels' `choices`).
function chooseMove(best) {
  const moves = best.moves;
  if (!moves.length) return null;
  const choices = state.data.labels && state.data.labels.choices;
  if (best.verdict.kind !== "cc3p" || !choices) return moves[0];
  const chosen = choices.find((c) => c.rule === $("rule").value);
  return (chosen && moves.find((m) => m.move === chosen.move)) || null;
}

// ---- board ----

function renderBoard() {
  const box = $("board");
  box.replaceChildren();
  const board = state.info.board;
  if (state.data.grid) {
    renderGrid(box, state.data.grid);
    return;
  }
  if (board && (board.kind === "go" || board.kind === "stones") && state.data.stones) {
    renderGo(box, board, state.data.stones);
    return;
  }
  if (!board || (board.kind !== "star" && board.kind !== "diamond")) {
    box.append(el("pre", { text: state.data.picture }));
    return;
  }
  const dx = 20, dy = 34.64, r = 15, pad = 22;
  const cells = board.cells;
  const maxHalf = Math.max(...cells.map((c) => c.half));
  const maxRow = Math.max(...cells.map((c) => c.row));
  const at = {};
  for (const c of cells) at[c.name] = { x: pad + c.half * dx, y: pad + c.row * dy, cell: c };
  const svg = el("svg:svg", {
    viewBox: `0 0 ${2 * pad + maxHalf * dx} ${2 * pad + maxRow * dy}`,
    role: "img",
  });
  const owner = {};
  for (const [who, list] of Object.entries(state.data.pieces)) for (const name of list) owner[name] = who;
  const mover = state.data.node.mover;
  const movesFrom = (name) => state.data.moves.filter((m) => m.path.length && m.path[0] === name);
  const targets = {};
  if (state.selected) for (const m of movesFrom(state.selected)) targets[m.path[m.path.length - 1]] = m;

  for (const c of cells) {
    const p = at[c.name];
    const [kind, who] = c.region.split(":");
    let cls = "cell" + (kind === "hex" ? "" : ` ${kind}-${playerClass(who)}`);
    const target = targets[c.name];
    if (target) cls += " target";
    const circle = el("svg:circle", { cx: p.x, cy: p.y, r, class: cls, "data-cell": c.name });
    circle.append(el("svg:title", { text: target ? `${target.move} → ${target.position}` : c.name }));
    if (target) circle.addEventListener("click", () => go(target.position));
    svg.append(circle);
    if (!owner[c.name]) svg.append(el("svg:text", { x: p.x, y: p.y + 3, class: "cellname", text: c.name }));
  }
  if (state.hoverPath) {
    const pts = state.hoverPath.map((n) => `${at[n].x},${at[n].y}`).join(" ");
    svg.append(el("svg:polyline", { points: pts, class: "path" }));
  }
  for (const [name, who] of Object.entries(owner)) {
    const p = at[name];
    if (!p) continue;
    const movable = who === mover && movesFrom(name).length > 0;
    let cls = `piece ${playerClass(who)}` + (movable ? " movable" : "") + (state.selected === name ? " selected" : "");
    const piece = el("svg:circle", { cx: p.x, cy: p.y, r: r - 2, class: cls, "data-piece": name, "data-player": who });
    piece.append(el("svg:title", { text: `${who} on ${name}` + (movable ? ": click to see its moves" : "") }));
    if (movable) {
      piece.addEventListener("click", () => {
        state.selected = state.selected === name ? null : name;
        renderBoard();
        renderMoves();
      });
    }
    // The player's letter (cc3p), or the cell's number where moves are written by number (cc2p).
    const label = board.piece_label === "cell" ? name : who;
    svg.append(piece, el("svg:text", { x: p.x, y: p.y, class: "piecelabel", text: label }));
  }
  box.append(svg);
}

// The CSS class of a player's colour: its letter (A, B, C), else p0, p1, ... by its place in
// the game's list of players ("player 0" of cc2p is p0).
function playerClass(who) {
  return /^[A-Z]$/.test(who) ? who : `p${state.info.players.indexOf(who)}`;
}

// What the colours of the drawing stand for, under the board.
function renderKey() {
  const box = $("key");
  box.replaceChildren();
  const board = state.info.board;
  const swatch = (cls, text) => el("span", { class: "keyitem" }, el("span", { class: `swatch ${cls}` }), text);
  if (state.data.grid) {
    box.append(
      swatch("tile A", "an A tile"),
      swatch("tile B", "a B tile"),
      el("span", { text: "Each cell's stack is drawn bottom to top; its top tile (outlined) says who may move from it." }),
    );
  } else if (board && board.kind === "diamond") {
    const [p0, p1] = state.info.players;
    box.append(
      swatch("piece p0", `${p0}: starts on the tinted cells at the top, goes to the bottom`),
      swatch("piece p1", `${p1}: starts at the bottom, goes to the top`),
      el("span", { text: `Numbers are cell numbers, as moves write them: "0 1-4" is ${p0}'s move from cell 1 to cell 4.` }),
    );
  } else if (board && board.kind === "star") {
    box.append(
      ...state.info.players.map((p) => swatch(`piece ${p}`, p)),
      el("span", { text: "Each player starts on the cells tinted in its colour and goes to those outlined in it." }),
    );
  }
  box.hidden = !box.childNodes.length;
}

// A grid of stacks (TOPPEN): each cell a square, its stack drawn bottom to top.
function renderGrid(box, grid) {
  const size = 64, pad = 10;
  const cells = grid.cells;
  const cols = Math.max(...cells.map((c) => c.col)) + 1;
  const rows = Math.max(...cells.map((c) => c.row)) + 1;
  // Tiles 5 units high, thinner when the tallest stack would reach the cell's name.
  const tallest = Math.max(1, ...cells.map((c) => (c.stack || "").length));
  const tile = Math.min(5, (size - 24) / tallest);
  const width = 2 * pad + cols * size;
  // A small terrain (the last tower) is drawn no larger than a cell of the full one.
  const svg = el("svg:svg", { viewBox: `0 0 ${width} ${2 * pad + rows * size + 14}`, role: "img", style: `max-width: ${Math.round(width * 1.6)}px` });
  const mover = state.data.node.mover;
  const movesFrom = (name) => state.data.moves.filter((m) => m.path.length && m.path[0] === name);
  const targets = {};
  if (state.selected) for (const m of movesFrom(state.selected)) targets[m.path[m.path.length - 1]] = m;
  for (const c of cells) {
    const x = pad + c.col * size, y = pad + c.row * size;
    const target = targets[c.name];
    const movable = c.stack && c.stack[c.stack.length - 1] === mover && movesFrom(c.name).length > 0;
    let cls = "square" + (target ? " target" : "") + (movable ? " movable" : "") + (state.selected === c.name ? " selected" : "");
    const sq = el("svg:rect", { x: x + 2, y: y + 2, width: size - 4, height: size - 4, rx: 6, class: cls, "data-cell": c.name });
    sq.append(el("svg:title", { text: target ? `${target.move} → ${target.position}` : `${c.name}: ${c.stack || "empty"} (bottom to top)` }));
    if (target) sq.addEventListener("click", () => go(target.position));
    else if (movable)
      sq.addEventListener("click", () => {
        state.selected = state.selected === c.name ? null : c.name;
        renderBoard();
        renderMoves();
      });
    svg.append(sq);
    [...(c.stack || "")].forEach((t, k) => {
      const top = k === c.stack.length - 1;
      svg.append(el("svg:rect", { x: x + 10, y: y + size - 8 - (k + 1) * tile, width: size - 20, height: tile - 0.5, class: `tile ${t}` + (top ? " top" : "") }));
    });
    svg.append(el("svg:text", { x: x + 6, y: y + 14, class: "cellname", "text-anchor": "start", text: c.name }));
  }
  box.append(svg);
}

// A Go board on its surface: the points, the stones, and the glued edges marked by arrows
// (edges glued straight have arrows pointing the same way, edges glued with a flip opposite ways).
// Click an empty point to play there.
function renderGo(box, board, stones) {
  const size = 56, pad = 40, r = 20;
  const { rows, cols } = board;
  const w = 2 * pad + (cols - 1) * size, h = 2 * pad + (rows - 1) * size;
  const svg = el("svg:svg", { viewBox: `0 0 ${w} ${h}`, role: "img", class: "go", "data-surface": board.surface });
  const x = (c) => pad + c * size, y = (row) => pad + row * size;
  const name = (row, c) => `${String.fromCharCode(97 + c)}${row + 1}`;
  // Grid lines, reaching the border where the edge is glued (they go on around the surface).
  // A plain "stones" board has no glued edges.
  const lr = (board.left_right || "none") !== "none", tb = (board.top_bottom || "none") !== "none";
  for (let row = 0; row < rows; row++)
    svg.append(el("svg:line", { x1: lr ? 4 : x(0), x2: lr ? w - 4 : x(cols - 1), y1: y(row), y2: y(row), class: "goline" }));
  for (let c = 0; c < cols; c++)
    svg.append(el("svg:line", { y1: tb ? 4 : y(0), y2: tb ? h - 4 : y(rows - 1), x1: x(c), x2: x(c), class: "goline" }));
  const arrow = (x1, y1, x2, y2, cls) => {
    svg.append(el("svg:line", { x1, y1, x2, y2, class: `glue ${cls}` }));
    const [dx, dy] = [Math.sign(x2 - x1), Math.sign(y2 - y1)];
    const tip = `${x2},${y2} ${x2 - 6 * dx - 5 * dy},${y2 - 6 * dy - 5 * dx} ${x2 - 6 * dx + 5 * dy},${y2 - 6 * dy + 5 * dx}`;
    svg.append(el("svg:polygon", { points: tip, class: `glue ${cls}` }));
  };
  if (lr) {
    arrow(10, y(0), 10, y(rows - 1) + 6, "lr left");
    if (board.left_right === "flip") arrow(w - 10, y(rows - 1), w - 10, y(0) - 6, "lr right flip");
    else arrow(w - 10, y(0), w - 10, y(rows - 1) + 6, "lr right");
  }
  if (tb) {
    arrow(x(0), 10, x(cols - 1) + 6, 10, "tb top");
    if (board.top_bottom === "flip") arrow(x(cols - 1), h - 10, x(0) - 6, h - 10, "tb bottom flip");
    else arrow(x(0), h - 10, x(cols - 1) + 6, h - 10, "tb bottom");
  }
  const moveTo = {};
  for (const m of state.data.moves) if (m.move !== "pass") moveTo[m.move] = m;
  for (let row = 0; row < rows; row++) {
    for (let c = 0; c < cols; c++) {
      const p = name(row, c);
      const stone = stones.rows[row][c];
      if (stone === "X" || stone === "O") {
        svg.append(el("svg:circle", { cx: x(c), cy: y(row), r, class: `stone ${stone === "X" ? "black" : "white"}`, "data-point": p }));
        continue;
      }
      // Where moves are not named by their point (Connect Four names the column), the drawing
      // says which move plays on which point.
      const m = stones.targets ? state.data.moves.find((mv) => mv.move === stones.targets[p]) : moveTo[p];
      const pt = el("svg:circle", { cx: x(c), cy: y(row), r: r - 4, class: "point" + (m ? " target" : "") + (stones.ko === p ? " ko" : ""), "data-point": p });
      pt.append(el("svg:title", { text: m ? `${m.move} → ${m.position}` : stones.ko === p ? `${p}: banned by ko` : p }));
      if (m) pt.addEventListener("click", () => go(m.position));
      svg.append(pt);
    }
  }
  box.append(svg);
}

// ---- labels ----

// A value with its depth (W12, L3): a draw or an illegal state shows none, and neither do
// values-only tables (depth null), which do not know it.
function valueText(a) {
  return a.value === "D" || a.value === "-" || a.depth == null ? a.value : `${a.value}${a.depth}`;
}

function valueSpan(a) {
  return el("span", { class: "v", text: valueText(a) });
}

function renderLabels() {
  const box = $("labels");
  box.replaceChildren();
  const l = state.data.labels;
  box.dataset.position = state.data.position;
  if (l.kind === "score") {
    // A bound no solved threshold proves is null: no data-min / data-max attribute.
    const bounds = {};
    if (l.score_min != null) bounds["data-min"] = l.score_min;
    if (l.score_max != null) bounds["data-max"] = l.score_max;
    box.append(el("p", { class: "score", ...bounds }, el("span", { class: "v", text: l.short }), " ", el("span", { class: "words", text: l.says })));
    const body = el("tbody");
    for (const t of l.thresholds)
      body.append(el("tr", { "data-k": t.k }, el("th", { text: `≥ ${t.k > 0 ? "+" : ""}${t.k}` }), el("td", { class: "v", "data-value": t.value }, valueSpan(t))));
    box.append(el("table", { class: "labels thresholds" }, el("thead", {}, el("tr", {}, el("th", { text: "score" }), el("th", { text: "value" }))), body));
    renderLine(box, state.data.line);
    return;
  }
  if (l.kind !== "questions") {
    const row = el("p", { class: "two", "data-value": l.value }, valueSpan(l), " ", el("span", { class: "words", text: l.says }));
    box.append(row);
    renderLine(box, state.data.line);
    return;
  }
  box.append(
    el("span", { class: "badge", "data-class": l.class, text: l.class.replace("_", " ") }),
    el("p", { class: "classnote", text: CLASS_NOTES[l.class] || "" }),
  );
  const players = state.info.players;
  const body = el("tbody");
  for (const p of players) {
    const solo = l.solo[p];
    const hands = players
      .filter((q) => q !== p && l.enable[p][q].value === "W")
      .map((q) => `${q} (${valueText(l.enable[p][q])})`);
    body.append(
      el(
        "tr",
        { "data-player": p },
        el("th", { class: `who ${p}`, text: p }),
        el("td", { class: "solo", "data-value": solo.value }, valueSpan(solo), " ", el("span", { class: "words", text: SOLO_WORDS[solo.value] })),
        el("td", { class: "enable", text: hands.length ? hands.join(", ") : "nobody" }),
      ),
    );
  }
  box.append(
    el(
      "table",
      { class: "labels" },
      el("thead", {}, el("tr", {}, el("th", { text: "player" }), el("th", { text: "alone" }), el("th", { text: "hands the win to" }))),
      body,
    ),
  );
  const km = l.kingmakers.map((k) => `${k.maker} for ${k.for}`);
  box.append(el("p", { class: "kingmakers", text: km.length ? `Kingmakers: ${km.join(", ")}` : "No kingmakers here." }));
  renderRules(box, l.rules);
  renderLine(box, state.data.line);
}

// Who wins from here when every player follows each preference rule (games small enough).
function renderRules(box, rules) {
  if (!rules) return;
  const chosen = $("rule").value;
  const body = el("tbody");
  for (const r of rules) {
    const plies = r.outcome.endsWith("wins") ? ` in ${r.plies} plies` : "";
    body.append(
      el("tr", { "data-rule": r.rule, class: r.rule === chosen ? "chosen" : "" }, el("th", { text: r.rule }), el("td", { text: r.outcome + plies })),
    );
  }
  box.append(
    el("h3", { class: "rules-title", text: "Who wins when the losers choose, by rule" }),
    el("table", { class: "labels rules" }, body),
  );
}

const signed = (k) => `${k > 0 ? "+" : ""}${k}`;

// The principal line of a two-player game: best play from here, or the draw cycle. Go has one
// per solved threshold (Black playing for a score ≥ k against White): a choice of threshold,
// the default the one the server picked.
function renderLine(box, line) {
  if (!line || !line.plies) return;
  if (line.thresholds) {
    const ks = line.thresholds.map((t) => t.k);
    const k = state.lineK != null && ks.includes(state.lineK) ? state.lineK : line.k;
    const select = el("select", { id: "line-k" });
    for (const t of line.thresholds) {
      const option = el("option", { value: t.k, text: `score ≥ ${signed(t.k)} (${t.value})` });
      option.selected = t.k === k;
      select.append(option);
    }
    select.addEventListener("change", () => {
      state.lineK = Number(select.value);
      renderLabels();
    });
    box.append(el("p", { class: "line-at" }, el("label", { for: "line-k", text: "Principal line at the threshold " }), select));
    line = line.thresholds.find((t) => t.k === k);
  }
  const end = line.ending;
  // At a Go threshold: who forces what, and the final score the line ends with.
  const result =
    line.k == null
      ? `(${end.winner} wins)`
      : `: ${line.value === "W" ? "Black forces a score ≥" : "White keeps the score below"} ${signed(line.k)}, ending with a ${end.outcome}`;
  const title =
    end.kind === "cycle"
      ? "Draw cycle: moves that keep the draw until a position repeats"
      : end.kind === "game_over"
        ? `Principal line: shortest win against longest resistance ${result}`
        : "Principal line (cut)";
  const whose = line.player ? ` (${line.player} alone; values are ${line.player}'s)` : "";
  box.append(el("h3", line.k != null ? { class: "line-title at", "data-k": line.k, text: title } : { class: "line-title", text: title + whose }));
  const list = el("ol", { class: "line", start: 0 });
  line.plies.forEach((p, k) => {
    const inCycle = end.kind === "cycle" && k >= end.from;
    const item = el(
      "li",
      { class: "ply" + (inCycle ? " cycle" : ""), "data-position": p.position },
      el("button", { type: "button", text: p.move || "(here)", title: p.position, onclick: () => go(p.position) }),
      " ",
      el("span", { class: "chip", "data-value": p.value, text: valueText(p) }),
    );
    list.append(item);
  });
  box.append(list);
  if (end.kind === "cycle") {
    const last = line.plies.length - 1;
    const again = end.from === 0 ? "this position" : `the position after move ${end.from}`;
    box.append(el("p", { class: "classnote", text: `Move ${last} returns to ${again}: the shaded moves repeat forever and nobody wins.` }));
  }
}

// ---- moves ----

function renderMoves() {
  const list = $("moves");
  list.replaceChildren();
  const d = state.data;
  const here = d.labels;
  const shown = d.moves.filter(passesFilter).length;
  const filtered = shown === d.moves.length ? "" : `, ${shown} shown`;
  $("moves-hint").textContent = d.moves.length
    ? `${d.moves.length} legal${filtered}, the best at the top; ${state.selected ? "showing the moves of " + state.selected : "what each does to the labels"}`
    : "none";
  for (const m of d.moves) {
    const l = m.labels;
    const chips = el("div", { class: "chips" });
    if (l.kind === "questions") {
      chips.append(el("span", { class: "badge", "data-class": l.class, text: l.class.replace("_", " ") }));
      for (const p of state.info.players) {
        const a = l.solo[p];
        const changed = here.solo[p].value !== a.value;
        const chip = el("span", { class: "chip" + (changed ? " changed" : ""), "data-player": p, "data-value": a.value });
        chip.append(el("span", { class: `who ${p}`, text: p }), " ", valueText(a));
        chip.title = `${p} ${SOLO_WORDS[a.value]}` + (changed ? ` (was: ${SOLO_WORDS[here.solo[p].value]})` : "");
        chips.append(chip);
      }
      const km = l.kingmakers.map((k) => `${k.maker}⇒${k.for}`);
      if (km.length) chips.append(el("span", { class: "km", title: "P⇒Q: P is kingmaker for Q", text: "kingmaker " + km.join(" ") }));
    } else if (l.kind === "score") {
      chips.append(el("span", { class: "chip score", "data-short": l.short, text: `score ${l.short}` }));
    } else {
      chips.append(el("span", { class: "chip", "data-value": l.value, text: valueText(l) }), " ", el("span", { class: "words", text: l.says }));
    }
    if (m.best) {
      const depth = m.best.depth == null ? "" : ` ${m.best.depth}`;
      chips.prepend(el("span", { class: "cat", "data-category": m.best.category, title: "what the move does for the mover", text: m.best.category + depth }));
    }
    const item = el(
      "li",
      { class: "move", "data-move": m.move, "data-position": m.position, "data-category": m.best ? m.best.category : "" },
      el("button", { type: "button", class: "play", title: m.position, text: m.move, onclick: () => { state.autoplayed = 0; go(m.position); } }),
      chips,
    );
    if (m.changes.length) item.append(el("ul", { class: "changes" }, ...m.changes.map((c) => el("li", { text: c }))));
    if (state.selected) item.classList.add(m.path[0] === state.selected ? "hot" : "dim");
    if (!passesFilter(m)) item.classList.add("filtered");
    item.addEventListener("mouseenter", () => {
      state.hoverPath = m.path.length ? m.path : null;
      renderBoard();
    });
    item.addEventListener("mouseleave", () => {
      state.hoverPath = null;
      renderBoard();
    });
    list.append(item);
  }
}

init();
