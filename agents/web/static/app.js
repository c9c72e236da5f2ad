// schnapsen-web: the page. Plain JavaScript, no build step. It draws what the server sends (the person's view,
// built from their observation) and sends actions by name; it knows no rules itself.
"use strict";

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const RED = new Set(["D", "H"]);
const STORAGE_KEY = "schnapsen-web-game";  // sessionStorage: one game per browser tab

const ui = {
  options: null,     // GET /api/options
  cards: null,       // GET /api/cards
  view: null,        // the game's view
  busy: false,       // an action is in flight (the opponent is thinking)
  replay: null,      // {id, name, records, index, seat, frames, step}
  analysis: null,    // {key, results: {analyser: result | "pending" | {error}}}
};

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------------------------------------ server
async function api(method, path, body, raw) {
  const init = { method, headers: {} };
  if (raw !== undefined) {
    init.body = raw;
    init.headers["Content-Type"] = "application/x-ndjson";
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const res = await fetch(path, init);
  if (res.status === 204) return null;
  const type = res.headers.get("Content-Type") || "";
  const data = type.includes("json") && !type.includes("ndjson") ? await res.json() : await res.text();
  if (!res.ok) {
    const err = new Error((data && data.error) || `${res.status} ${res.statusText}`);
    err.status = res.status;
    err.data = data;
    throw err;
  }
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { box.hidden = true; }, 10000);
}

function clearError() { $("error").hidden = true; }

// ------------------------------------------------------------------------------------------------ text
function cardText(code) {
  const rank = code[0] === "T" ? "10" : code[0];
  return `<span class="glyph ${RED.has(code[1]) ? "red" : "black"}">${rank}${SUITS[code[1]]}</span>`;
}

function suitText(s) { return `<span class="glyph ${RED.has(s) ? "red" : "black"}">${SUITS[s]}</span>`; }

function actionText(name) {
  const [verb, arg] = name.split(" ");
  if (verb === "play") return cardText(arg);
  if (verb === "marriage") return `marriage ${suitText(arg)}`;
  return verb;
}

// A side of the table ("you" / "opponent", as the server names them) as the page names it: in a replay, by seat.
function who(side) {
  if (ui.replay) return side === "you" ? ui.replay.seat : otherSeat(ui.replay.seat);
  return side === "you" ? "you" : "opponent";
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

// ------------------------------------------------------------------------------------------------ cards
function cardNode(code, opts = {}) {
  const el = document.createElement(opts.action || opts.onClick ? "button" : "div");
  el.className = "card" + (opts.cls ? " " + opts.cls : "");
  el.innerHTML = code ? ui.cards.faces[code] : ui.cards.back;
  if (code) el.dataset.card = code;
  if (opts.action) {
    el.type = "button";
    el.dataset.action = opts.action;
    el.title = opts.action;
    el.setAttribute("aria-label", opts.action);
    el.addEventListener("click", () => play(opts.action));
  } else if (opts.onClick) {  // a card played by way of another action (a marriage's K or Q)
    el.type = "button";
    el.title = opts.title;
    el.setAttribute("aria-label", opts.title);
    el.addEventListener("click", opts.onClick);
  }
  return el;
}

// ------------------------------------------------------------------------------------------------ drawing
function render() {
  const replaying = ui.replay !== null;
  const frame = replaying ? ui.replay.frames[ui.replay.step] : null;
  const v = ui.view;
  const t = replaying ? frame : (v ? v.table : null);
  document.body.dataset.state = bodyState(v, t, replaying);
  $("replay-panel").hidden = !replaying;
  $("felt").classList.toggle("replaying", replaying);
  if (!t) return;
  $("felt").classList.toggle("over", Boolean(t.result));  // the hand is over: room for the banner
  renderOpponent(t, replaying, v);
  renderStock(t, replaying);
  renderTrick(t);
  renderStatus(t, replaying);
  renderMine(t, replaying);
  renderBanner(t, v, replaying);
  renderScore(t, v, replaying);
  renderLog(t.log);
  renderAnalysis(t, replaying);
  $("btn-download").disabled = replaying || !v || v.finished_hands === 0;
  if (replaying) renderReplayControls();
}

function bodyState(v, t, replaying) {
  if (replaying) return "replay";
  if (!t) return "loading";
  if (ui.busy) return "thinking";
  if (t.result) return v.match && v.match.over ? "match-over" : "hand-over";
  return t.to_move === "you" ? "your-turn" : "opponent-turn";
}

function renderOpponent(t, replaying, v) {
  const box = $("opp-hand");
  box.replaceChildren();
  const opp = t.opponent;
  if (t.opponent_hand) {  // after the hand, or in a replay: every card face up
    for (const c of t.opponent_hand) box.append(cardNode(c, { cls: "revealed" }));
  } else {
    for (const c of opp.known) box.append(cardNode(c, { cls: "known" }));
    for (let k = 0; k < opp.hand_size - opp.known.length; k++) box.append(cardNode(null));
  }
  let name = replaying ? otherSeat(ui.replay.seat) : (v ? `${v.opponent.label}` : "opponent");
  if (replaying) {
    const players = ui.replay.records[ui.replay.index].players;
    if (players && players[name]) name += ` (${players[name]})`;
  }
  $("opp-name").textContent = name;
  $("opp-score").innerHTML = scoreText(opp);
}

function otherSeat(seat) { return seat === "player_0" ? "player_1" : "player_0"; }

function scoreText(side) {
  let s = `${side.points} points · ${side.tricks} ${side.tricks === 1 ? "trick" : "tricks"}`;
  if (side.pending) s += ` · ${side.pending} pending`;
  if (side.marriages.length) s += " · married " + side.marriages.map(suitText).join(" ");
  return s;
}

function renderStock(t, replaying) {
  const box = $("stock-area");
  box.replaceChildren();
  const st = t.stock;
  const pile = document.createElement("div");
  pile.className = "pile";
  if (st.size > 0) {
    if (st.turn_up) pile.append(cardNode(st.turn_up, { cls: "turn-up" + (st.closed ? " closed" : "") }));
    if (st.size > 1) pile.append(cardNode(null, { cls: "stock-top" }));
  }
  box.append(pile);
  const label = document.createElement("div");
  label.className = "label";
  let text = st.size === 0 ? "stock exhausted" : `stock ${st.size}`;
  if (st.closed) text += ` · closed by ${who(st.closed_by)}`;
  label.innerHTML = `${text}<br>trump ${suitText(t.trump)}`;
  box.append(label);
  if (replaying && t.stock_order && t.stock_order.length) {
    const order = document.createElement("div");
    order.className = "label small";
    order.innerHTML = "order: " + t.stock_order.map(cardText).join(" ");
    box.append(order);
  }
}

function renderTrick(t) {
  // The trick being played; beside it, smaller, the last completed trick (the opponent may have answered and led
  // again before the page is drawn: its answer stays in view).
  const box = $("trick-area");
  box.replaceChildren();
  const group = (cards, cls, text) => {
    const g = document.createElement("div");
    g.className = "trick-group " + cls;
    const row = document.createElement("div");
    row.className = "trick";
    for (const c of cards) row.append(cardNode(c, { cls: cls === "current" ? "led" : "last" }));
    const label = document.createElement("div");
    label.className = "label";
    label.textContent = text;
    g.append(row, label);
    return g;
  };
  const last = t.last_trick;
  const lastText = last ? (ui.replay ? `last trick: ${who(last.won_by)}'s`
    : `last trick: ${last.won_by === "you" ? "yours" : "the opponent's"}`) : "";
  if (t.table) {
    box.append(group([t.table], "current", `led by ${who(t.table_led_by)}`));
    if (last) box.append(group(last.cards, "previous", lastText));
  } else if (last) {
    box.append(group(last.cards, "current", lastText));
  } else {
    const lead = t.result ? "" : `${who(t.leader)} ${t.leader === "you" && !ui.replay ? "lead" : "leads"}`;
    box.append(group([], "current", lead));
  }
}

function renderStatus(t, replaying) {
  const lines = [];
  lines.push(t.result ? "hand over" : `trick ${t.trick} of ${t.n_tricks}`);
  if (replaying) {
    lines.push(t.result ? "" : `${who(t.to_move)} to move`);
  } else if (ui.busy) {
    lines.push('<span class="spinner"></span> opponent thinking…');
  } else if (!t.result) {
    lines.push(t.to_move === "you" ? "<b>your move</b>" : "opponent to move " +
      '<button type="button" id="btn-opponent" title="the opponent\'s move failed: try again">let it move</button>');
  }
  if (t.announced) lines.push(`marriage ${suitText(t.announced)} announced: lead its king or queen`);
  if (t.snapshot) {
    const nonCloser = who(t.stock.closed_by === "you" ? "opponent" : "you");
    lines.push(`${nonCloser} at the close: ${t.snapshot.points} points, ${t.snapshot.tricks} ` +
      `${t.snapshot.tricks === 1 ? "trick" : "tricks"}`);
  }
  $("status-area").innerHTML = lines.filter(Boolean).map((l) => `<div>${l}</div>`).join("");
  const retry = $("btn-opponent");
  if (retry) retry.addEventListener("click", opponentMoves);
}

function renderMine(t, replaying) {
  const box = $("my-hand");
  box.replaceChildren();
  const legal = new Map();
  const mine = !replaying && !ui.busy && t.to_move === "you";
  if (mine) for (const a of t.legal) legal.set(a.name, a);
  for (const c of t.hand) {
    const name = `play ${c}`;
    const marriage = legal.get(`marriage ${c[1]}`);
    if (legal.has(name)) {
      box.append(cardNode(c, { action: name, cls: "legal" }));
    } else if (marriage && (c[0] === "K" || c[0] === "Q")) {
      // R13: while the marriage may be announced its K and Q are led only with it. The card is playable that way:
      // clicking it announces the marriage and leads the card, as a player shows the pair and leads one.
      const rank = c[0] === "K" ? "king" : "queen";
      const title = `announce the marriage ${SUITS[c[1]]} (${marriagePoints(marriage, t)}) and lead the ${rank}`;
      box.append(cardNode(c, { cls: "marriage", title, onClick: () => marryAndLead(marriage.name, name) }));
    } else {
      box.append(cardNode(c, { cls: mine ? "illegal" : "" }));
    }
  }
  $("my-name").textContent = replaying ? ui.replay.seat : (ui.view ? `you (${ui.view.seat})` : "you");
  $("my-score").innerHTML = scoreText(t.you);
  const actions = $("actions");
  actions.replaceChildren();
  if (!mine) return;
  for (const a of t.legal) {
    if (a.kind === "play") continue;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "action " + a.kind;
    b.dataset.action = a.name;
    b.innerHTML = specialText(a, t);
    b.addEventListener("click", () => play(a.name));
    actions.append(b);
  }
}

function marriagePoints(a, t) { return a.suit === t.trump ? t.marriage_points.trump : t.marriage_points.plain; }

function specialText(a, t) {
  if (a.kind === "marriage") return `Marriage ${suitText(a.suit)} (${marriagePoints(a, t)})`;
  if (a.kind === "exchange") return `Exchange for ${cardText(t.stock.turn_up)}`;
  if (a.kind === "close") return "Close the stock";
  if (a.kind === "claim") return `Claim ${t.claim_target}`;
  return escapeHtml(a.name);
}

function renderBanner(t, v, replaying) {
  const box = $("banner");
  if (!t.result) { box.hidden = true; return; }
  const r = t.result;
  const points = `${r.game_points} game point${r.game_points === 1 ? "" : "s"} (${r.reason.replace(/_/g, " ")})`;
  let text;
  if (r.winner === null) text = `A tie: no game points (${r.reason})`;
  else if (replaying) text = `${who(r.winner)} wins ${points}`;
  else text = `${r.winner === "you" ? "You win" : "The opponent wins"} ${points}`;
  const buttons = [];
  if (!replaying && v.match) {
    const m = v.match;
    text += `<br>Match: you ${m.you} – ${m.opponent} opponent`;
    if (m.over) text += `<br><b>${m.winner === "you" ? "You won the match!" : "The opponent won the match."}</b>`;
    else buttons.push('<button type="button" id="btn-next">Next hand</button>');
  }
  if (!replaying) {
    buttons.push('<button type="button" id="btn-replay">Replay</button>');
    if (!v.match || v.match.over) buttons.push('<button type="button" id="btn-again">New game</button>');
  }
  const notes = unclaimed(t).map((side) => {
    const name = replaying ? who(side) : (side === "you" ? "You" : "The opponent");
    return `<div class="unclaimed">${escapeHtml(name)} reached ${t.claim_target} with ${t[side].points} points ` +
      "but did not claim.</div>";
  });
  box.innerHTML = `<div class="result">${text}</div>${notes.join("")}<div class="buttons">${buttons.join("")}</div>`;
  box.hidden = false;
  const next = $("btn-next");
  if (next) next.addEventListener("click", nextHand);
  const again = $("btn-again");
  if (again) again.addEventListener("click", () => newGame());
  const rep = $("btn-replay");
  if (rep) rep.addEventListener("click", replayGame);
}

// The sides that ended the hand with the claim target reached but made no claim (R20-R23: reaching it is not
// enough, a player who never claims may lose the hand): not the claimant (the winner of a correct claim, the loser
// of a false one), and not the winner by R66-10's count, who needs no claim.
function unclaimed(t) {
  const r = t.result;
  const claimant = r.reason === "claim" ? r.winner
    : r.reason === "false_claim" ? (r.winner === "you" ? "opponent" : "you") : null;
  return ["you", "opponent"].filter((side) => t[side].points >= t.claim_target && side !== claimant &&
    !(r.reason === "count" && side === r.winner));
}

function renderScore(t, v, replaying) {
  const box = $("match-score");
  if (replaying) {
    const s = ui.replay.records[ui.replay.index];
    box.innerHTML = `record ${s.index + 1} of ${ui.replay.records.length} · ${s.ruleset}<br>` +
      `${ui.replay.seat} at the bottom · every card shown`;
    return;
  }
  if (!v) { box.textContent = ""; return; }
  const parts = [`${v.ruleset} · you are ${v.seat} · ${t.dealer === "you" ? "you deal" : "the opponent deals"}`];
  if (v.match) {
    const m = v.match;
    parts.push(`<span class="big">you ${m.you} – ${m.opponent} ${escapeHtml(v.opponent.label)}</span>`);
    parts.push(`hand ${v.hand_no} · match to ${m.target}${m.carry ? ` · carry ${m.carry}` : ""}`);
  } else {
    parts.push(`one hand against ${escapeHtml(v.opponent.label)}`);
  }
  box.innerHTML = parts.join("<br>");
}

function renderLog(log) {
  // One line a trick: its moves in order, who took it, what was drawn after it.
  const box = $("log");
  box.replaceChildren();
  const tricks = [];
  for (const e of log) {
    if (!tricks.length || tricks[tricks.length - 1].trick !== e.trick) tricks.push({ trick: e.trick, moves: [] });
    tricks[tricks.length - 1].moves.push(e);
  }
  for (const t of tricks) {
    const li = document.createElement("li");
    li.value = t.trick;
    const parts = t.moves.map((e) => `<span class="by ${e.by}">${ui.replay ? who(e.by) : (e.by === "you" ? "you" : "opp")}` +
      `</span> ${actionText(e.action)}`);
    let text = parts.join(", ");
    for (const e of t.moves) {
      if (e.won_by) {
        text += ` <span class="won">→ ${ui.replay ? who(e.won_by) : (e.won_by === "you" ? "yours" : "opponent's")}</span>`;
      }
      if (e.drew) text += `<span class="drew">; ${who("you")} ${ui.replay ? "draws" : "draw"} ${cardText(e.drew)}</span>`;
      if (e.opponent_drew) text += `<span class="drew">; ${who("opponent")} draws ${cardText(e.opponent_drew)}</span>`;
    }
    li.innerHTML = text;
    box.append(li);
  }
  box.scrollTop = box.scrollHeight;
}

// ------------------------------------------------------------------------------------------------ analysis
function analysisKey() {
  if (ui.replay) return `replay:${ui.replay.id}:${ui.replay.index}:${ui.replay.step}`;
  return ui.view ? `game:${ui.view.game}:${ui.view.version}` : null;
}

function renderAnalysis(t, replaying) {
  const btn = $("btn-analyse");
  const canAnalyse = !t.result && (replaying || (t.to_move === "you" && !ui.busy));
  btn.disabled = !canAnalyse;
  const box = $("analysis");
  const a = ui.analysis;
  if (!a || a.key !== analysisKey()) {
    box.innerHTML = canAnalyse ? '<p class="hint">Values in game points for the player to move, by PIMC and the ' +
      "expert search, and the policies' probabilities.</p>" : "";
    return;
  }
  const names = a.order;
  const actions = a.actions;
  // In a wrapper that scrolls sideways if the columns cannot fit the panel (a narrow window, a long policy name).
  let html = `<p class="hint">for ${escapeHtml(a.mover)}</p><div class="table-wrap"><table><thead><tr>` +
    '<th scope="col">action</th>';
  for (const n of names) html += `<th scope="col">${escapeHtml(n)}</th>`;
  html += "</tr></thead><tbody>";
  for (const act of actions) {
    html += `<tr><td>${actionText(act)}</td>`;
    for (const n of names) {
      const r = a.results[n];
      if (r === "pending") { html += '<td class="pending"><span class="spinner small"></span></td>'; continue; }
      if (r.error) { html += '<td class="failed">–</td>'; continue; }
      const entry = r.values.find((x) => x.name === act);
      const best = r.best.includes(act) ? " best" : "";
      const val = r.kind === "values" ? (entry.value >= 0 ? "+" : "") + entry.value.toFixed(2)
        : (100 * entry.value).toFixed(0) + "%";
      html += `<td class="num${best}">${val}</td>`;
    }
    html += "</tr>";
  }
  html += "</tbody></table></div>";
  const errors = names.filter((n) => a.results[n] && a.results[n].error);
  for (const n of errors) html += `<p class="failed">${escapeHtml(n)}: ${escapeHtml(a.results[n].error)}</p>`;
  const done = names.filter((n) => a.results[n] !== "pending" && !a.results[n].error);
  if (done.length) {
    html += `<p class="hint">${done.map((n) => `<span class="timing">${escapeHtml(n)} ` +
      `${a.results[n].seconds.toFixed(1)} s</span>`).join(" · ")}</p>`;
  }
  box.innerHTML = html;
}

async function analyse() {
  const replaying = ui.replay !== null;
  const t = replaying ? ui.replay.frames[ui.replay.step] : ui.view.table;
  const ruleset = replaying ? ui.replay.records[ui.replay.index].ruleset : ui.view.ruleset;
  const analysers = ui.options.analysers[ruleset].map((x) => x.id);
  const key = analysisKey();
  let actions = t.legal.map((x) => x.name);
  let mover = "you";
  if (replaying) mover = t.to_move === "you" ? ui.replay.seat : otherSeat(ui.replay.seat);
  ui.analysis = { key, order: analysers, actions, mover, results: {} };
  for (const n of analysers) ui.analysis.results[n] = "pending";
  render();
  await Promise.all(analysers.map(async (n) => {
    let result;
    try {
      const out = replaying
        ? await api("POST", `/api/replays/${ui.replay.id}/analysis`,
          { record: ui.replay.index, step: ui.replay.step, analysers: [n] })
        : await api("POST", `/api/games/${ui.view.game}/analysis`, { analysers: [n], version: ui.view.version });
      result = out.analyses[0];
    } catch (e) {
      result = { error: e.message };
    }
    if (!ui.analysis || ui.analysis.key !== key) return;  // the position changed meanwhile
    if (!result.error && ui.analysis.actions.length === 0) ui.analysis.actions = result.values.map((x) => x.name);
    ui.analysis.results[n] = result;
    render();
  }));
}

// ------------------------------------------------------------------------------------------------ playing
function setView(view) {
  ui.view = view;
  sessionStorage.setItem(STORAGE_KEY, view.game);
  render();
}

// One move request on the game: the page is busy until the answer's view (or, after an error, the game as the
// server has it) is drawn. `viewOf` picks the view out of the answer.
async function send(path, body, viewOf) {
  ui.busy = true;
  render();
  try {
    const out = await api("POST", `/api/games/${ui.view.game}/${path}`, { ...body, version: ui.view.version });
    ui.busy = false;
    setView(viewOf(out));
  } catch (e) {
    ui.busy = false;
    showError(e.message);
    await reload();
  }
}

async function play(action) {
  if (ui.busy || !ui.view) return;
  clearError();
  await send("actions", { action }, (out) => out.view);
}

// A marriage's K or Q clicked: announce the marriage, then lead that card. The announcement opens a claim window
// (R20 W2): when a claim is offered after it the player decides, so the page stops there.
async function marryAndLead(marriage, lead) {
  if (ui.busy || !ui.view) return;
  clearError();
  await send("actions", { action: marriage }, (out) => out.view);
  const t = ui.view.table;
  const announced = t.to_move === "you" && !t.result && t.announced === marriage.split(" ")[1];
  const names = announced ? t.legal.map((a) => a.name) : [];
  if (names.includes(lead) && !names.includes("claim")) await send("actions", { action: lead }, (out) => out.view);
}

async function opponentMoves() {
  // Only after an opponent's move failed (a worker restarted): the server normally answers every move at once.
  if (ui.busy) return;
  await send("opponent", {}, (out) => out.view);
}

async function nextHand() {
  if (ui.busy) return;
  await send("next", {}, (view) => view);
}

async function reload() {
  if (!ui.view) return;
  try {
    setView(await api("GET", `/api/games/${ui.view.game}`));
  } catch (e) {
    if (e.status === 404) sessionStorage.removeItem(STORAGE_KEY);
    render();
  }
}

function settings() {
  return {
    opponent: $("opt-opponent").value,
    ruleset: $("opt-ruleset").value,
    seat: $("opt-seat").value,
    mode: $("opt-mode").value,
  };
}

async function newGame(seed) {
  if (ui.busy) return;
  clearError();
  const body = settings();
  if (seed !== undefined && seed !== null) body.seed = seed;
  const old = ui.view ? ui.view.game : null;
  ui.replay = null;
  ui.analysis = null;
  ui.busy = true;
  render();
  try {
    const view = await api("POST", "/api/games", body);
    ui.busy = false;
    setView(view);
    if (view.opponent_error) showError(view.opponent_error);
    if (old && old !== view.game) api("DELETE", `/api/games/${old}`).catch(() => {});
  } catch (e) {
    ui.busy = false;
    showError(e.message);
    render();
  }
}

function fillOpponents(selected) {
  const ruleset = $("opt-ruleset").value;
  const sel = $("opt-opponent");
  sel.replaceChildren();
  for (const o of ui.options.opponents[ruleset]) {
    const opt = document.createElement("option");
    opt.value = o.id;
    opt.textContent = o.label + (o.kind === "policy" ? " (policy)" : "");
    sel.append(opt);
  }
  const ids = ui.options.opponents[ruleset].map((o) => o.id);
  sel.value = ids.includes(selected) ? selected : ui.options.default_opponent[ruleset];
}

// ------------------------------------------------------------------------------------------------ records
async function download() {
  try {
    const text = await api("GET", `/api/games/${ui.view.game}/records`);
    const blob = new Blob([text], { type: "application/x-ndjson" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    // A seed the server drew is sent only once the game is over (it deals the hidden cards): else the id names it.
    a.download = `schnapsen-${ui.view.ruleset}-${ui.view.seed ?? ui.view.game.slice(0, 8)}.jsonl`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  } catch (e) {
    showError(e.message);
  }
}

async function upload(file) {
  clearError();
  if (file.size > ui.options.max_upload_bytes) {
    showError(`${file.name}: ${file.size.toLocaleString()} bytes, over the limit of ` +
      `${ui.options.max_upload_bytes.toLocaleString()} bytes`);
    return;
  }
  try {
    const text = await file.text();
    const summary = await api("POST", `/api/replays?name=${encodeURIComponent(file.name)}`, undefined, text);
    for (const w of summary.warnings || []) showError(w);
    await openReplay(summary, 0, 0);  // the first record, at its deal
  } catch (e) {
    showError(e.message);
  }
}

async function replayGame() {
  try {
    const summary = await api("POST", `/api/games/${ui.view.game}/replay`);
    await openReplay(summary, summary.records.length - 1, -1);
  } catch (e) {
    showError(e.message);
  }
}

async function openReplay(summary, index, startStep) {
  ui.replay = { id: summary.replay, name: summary.name, records: summary.records, index: 0, seat: null,
    frames: [], step: 0 };
  const sel = $("replay-record");
  sel.replaceChildren();
  for (const r of summary.records) {
    const opt = document.createElement("option");
    opt.value = r.index;
    const res = r.result ? `${r.result.winner || "tie"} +${r.result.game_points}` : "unfinished";
    opt.textContent = `${r.index + 1}: ${r.ruleset}, ${r.moves} moves, ${res}`;
    sel.append(opt);
  }
  $("replay-name").textContent = "";
  await loadRecord(index, startStep);
}

async function loadRecord(index, startStep) {
  const seat = $("replay-seat").value;
  const q = seat ? `?seat=${seat}` : "";
  try {
    const out = await api("GET", `/api/replays/${ui.replay.id}/records/${index}${q}`);
    ui.replay.index = index;
    ui.replay.seat = out.seat;
    ui.replay.frames = out.frames;
    ui.replay.step = startStep < 0 ? out.frames.length - 1 : Math.min(startStep, out.frames.length - 1);
    $("replay-record").value = String(index);
    ui.analysis = null;
    render();
  } catch (e) {
    showError(e.message);
  }
}

function renderReplayControls() {
  const r = ui.replay;
  $("rp-step").textContent = `move ${r.step} of ${r.frames.length - 1}`;
  $("rp-first").disabled = $("rp-prev").disabled = r.step === 0;
  $("rp-last").disabled = $("rp-next").disabled = r.step === r.frames.length - 1;
}

function stepReplay(to) {
  if (!ui.replay) return;
  ui.replay.step = Math.max(0, Math.min(ui.replay.frames.length - 1, to));
  render();
}

function closeReplay() {
  ui.replay = null;
  ui.analysis = null;
  $("upload").value = "";
  render();
}

// ------------------------------------------------------------------------------------------------ start
async function start() {
  try {
    [ui.options, ui.cards] = await Promise.all([api("GET", "/api/options"), api("GET", "/api/cards")]);
  } catch (e) {
    showError(`cannot reach the server: ${e.message}`);
    return;
  }
  const rs = $("opt-ruleset");
  for (const r of ui.options.rulesets) {
    const opt = document.createElement("option");
    opt.value = opt.textContent = r;
    rs.append(opt);
  }
  const params = new URLSearchParams(location.search);
  if (params.get("ruleset") && ui.options.rulesets.includes(params.get("ruleset"))) rs.value = params.get("ruleset");
  fillOpponents(params.get("opponent"));
  // A setting of the link that is not on offer keeps the default (a select given an unknown value has none).
  for (const [key, sel] of [["seat", $("opt-seat")], ["mode", $("opt-mode")]]) {
    const value = params.get(key);
    if (value !== null && [...sel.options].some((o) => o.value === value)) sel.value = value;
  }
  rs.addEventListener("change", () => fillOpponents($("opt-opponent").value));
  $("new-game").addEventListener("submit", (ev) => { ev.preventDefault(); newGame(); });
  $("btn-analyse").addEventListener("click", analyse);
  $("btn-download").addEventListener("click", download);
  $("upload").addEventListener("change", (ev) => { if (ev.target.files.length) upload(ev.target.files[0]); });
  $("rp-first").addEventListener("click", () => stepReplay(0));
  $("rp-prev").addEventListener("click", () => stepReplay(ui.replay.step - 1));
  $("rp-next").addEventListener("click", () => stepReplay(ui.replay.step + 1));
  $("rp-last").addEventListener("click", () => stepReplay(ui.replay.frames.length - 1));
  $("rp-close").addEventListener("click", closeReplay);
  $("replay-record").addEventListener("change", (ev) => loadRecord(Number(ev.target.value), 0));
  $("replay-seat").addEventListener("change", () => loadRecord(ui.replay.index, ui.replay.step));
  document.addEventListener("keydown", (ev) => {
    if (!ui.replay || ev.target.tagName === "SELECT") return;
    if (ev.key === "ArrowLeft") stepReplay(ui.replay.step - 1);
    if (ev.key === "ArrowRight") stepReplay(ui.replay.step + 1);
  });
  // A link with settings (?opponent=...&seed=...) starts that game; otherwise this tab's game continues.
  const seed = params.get("seed");
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (!params.has("opponent") && !seed && stored) {
    try {
      setView(await api("GET", `/api/games/${stored}`));
      const v = ui.view;
      $("opt-ruleset").value = v.ruleset;
      fillOpponents(v.opponent.id);
      $("opt-seat").value = v.seat;
      $("opt-mode").value = v.mode;
      return;
    } catch (e) {
      sessionStorage.removeItem(STORAGE_KEY);
    }
  }
  await newGame(seed !== null && /^\d{1,15}$/.test(seed) ? Number(seed) : undefined);
}

document.addEventListener("DOMContentLoaded", start);
