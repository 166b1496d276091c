// The companion page: draws the live turn and what is kept from the server's event stream, and sends
// the page's changes (cancel a timer, tick off or add an item) as JSON with the page's CSRF token.
"use strict";

(function () {
  const L = JSON.parse(document.getElementById("labels").textContent);
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);

  // For measuring: each message drawn, with the server's time t and when it was on screen (seconds).
  const seen = [];
  window.hearthSeen = seen;
  let offset = 0; // server clock minus this clock, in seconds
  let timers = [];
  let shownTurn = null;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function args(a) {
    const parts = Object.entries(a || {}).map(([k, v]) => k + "=" + (typeof v === "string" ? v : JSON.stringify(v)));
    return parts.join(", ");
  }

  function fill(list, items, make) {
    list.replaceChildren(...items.map(make));
  }

  function drawLive(live) {
    const state = $("state");
    state.dataset.state = live.state;
    state.textContent = L["state_" + live.state] || live.state;
    const heard = $("heard");
    heard.textContent = live.heard || (live.state === "listening" ? L.hearing : "");
    heard.dataset.final = String(live.final);
    fill($("thoughts"), live.thoughts, (t) => el("li", "thought", t.heard + " → " + (t.tool ? t.tool + "(" + args(t.args) + ")" : "—")));
    $("thinking-box").hidden = live.thoughts.length === 0;
    const fetching = Object.entries(live.fetching);
    fill($("fetching"), fetching, ([tool, f]) => {
      const li = el("li", "fetch", tool + "(" + args(f.args) + ") ");
      li.dataset.status = f.status;
      li.append(el("span", "badge", L["status_" + f.status] || f.status));
      return li;
    });
    $("fetching-box").hidden = fetching.length === 0;
    const by = live.answered_by.split(" ");
    $("answered-by").textContent = [L[by[0]] || by[0], ...by.slice(1)].join(" ");
    fill($("calls"), live.calls, (c) => {
      const li = el("li", "call", c.tool + "(" + args(c.args) + ") ");
      li.dataset.status = c.status;
      li.append(el("span", "badge", L["status_" + c.status] || c.status));
      return li;
    });
    $("calls-box").hidden = live.calls.length === 0;
    fill($("units"), live.units, (u) => {
      const li = el("li", "unit", u.text);
      li.dataset.status = u.status;
      li.dataset.kind = u.kind;
      li.append(el("span", "badge", u.status === "cut" ? L.unit_cut : L.unit_heard));
      return li;
    });
  }

  function clock(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    const two = (n) => String(n).padStart(2, "0");
    return h > 0 ? h + ":" + two(m) + ":" + two(r) : m + ":" + two(r);
  }

  function remaining(t) {
    return t.ends_at === null ? t.remaining_s : t.ends_at - (Date.now() / 1000 + offset);
  }

  function tickTimers() {
    for (const t of timers) {
      const li = document.querySelector('#timers li[data-id="' + t.id + '"]');
      if (!li) continue;
      const left = remaining(t);
      li.querySelector(".remaining").textContent = clock(left);
      if (t.state === "running" && left <= 0) li.dataset.state = "ringing";
    }
  }

  function drawKept(kept) {
    timers = kept.timers;
    fill($("timers"), timers, (t) => {
      const li = el("li", "timer");
      li.dataset.id = String(t.id);
      li.dataset.state = t.state;
      li.append(el("span", "name", t.name));
      li.append(el("span", "remaining", clock(remaining(t))));
      if (t.state === "paused") li.append(el("span", "badge", L.paused));
      const cancel = el("button", "cancel", L.cancel);
      cancel.type = "button";
      cancel.addEventListener("click", () => change("/api/timers/cancel", { id: t.id }, cancel));
      li.append(cancel);
      return li;
    });
    $("timers-empty").hidden = timers.length > 0;

    fill($("list"), kept.list, (item) => {
      const li = el("li", "item");
      li.dataset.item = item.item;
      const tick = el("button", "tick", "✓");
      tick.type = "button";
      tick.title = L.tick;
      tick.setAttribute("aria-label", L.tick + ": " + item.item);
      tick.addEventListener("click", () => change("/api/list/complete", { item: item.item }, tick));
      li.append(tick, el("span", "what", item.item));
      if (item.quantity) li.append(el("span", "quantity", item.quantity));
      return li;
    });
    $("list-empty").hidden = kept.list.length > 0;

    fill($("notes"), kept.notes, (n) => el("li", "note", n.text));
    $("notes-empty").hidden = kept.notes.length > 0;

    const record = $("record");
    record.replaceChildren(...kept.record.slice().reverse().map((turn) => {
      const box = el("div", "turn");
      box.dataset.turn = String(turn.turn);
      for (const e of turn.entries) {
        if (e.role === "turn" || (e.role === "tool" && e.status === "started")) continue;
        const line = el("p", "entry " + e.role, e.role === "tool" ? e.text + " · " + e.status : e.text);
        line.dataset.status = e.status;
        if (e.origin === "page") line.append(el("span", "badge", L.from_page));
        else if (e.role === "assistant" && e.status !== "spoken") line.append(el("span", "badge", e.status === "cut" ? L.unit_cut : e.status));
        box.append(line);
      }
      return box;
    }));
    $("record-empty").hidden = kept.record.length > 0;

    const last = kept.turns.length ? kept.turns[kept.turns.length - 1] : null;
    const img = $("timeline");
    if (last && last.n !== shownTurn) {
      shownTurn = last.n;
      img.src = "/api/turns/" + last.n + "/timeline.svg";
      const outcome = L["outcome_" + last.outcome] || last.outcome;
      img.alt = last.transcript || outcome;
      $("timeline-caption").textContent = (last.transcript ? "“" + last.transcript + "” · " : "") + outcome;
    }
    img.hidden = !last;
    $("timeline-empty").hidden = !!last;
  }

  async function change(url, body, button) {
    if (button) button.disabled = true;
    const said = $("said");
    try {
      const response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify(body),
      });
      const type = response.headers.get("content-type") || "";
      const answer = type.startsWith("application/json") ? await response.json() : { ok: false, text: await response.text() };
      said.textContent = answer.text;
      said.dataset.ok = String(answer.ok);
      return answer.ok;
    } catch (err) {
      said.textContent = String(err);
      said.dataset.ok = "false";
      return false;
    } finally {
      said.hidden = false;
      if (button) button.disabled = false;
    }
  }

  $("add-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = $("add-item");
    const item = input.value.trim();
    if (!item) return;
    if (await change("/api/list/add", { item: item }, $("add-button"))) input.value = "";
  });

  function received(kind, event, draw) {
    const message = JSON.parse(event.data);
    draw(message);
    seen.push({ id: message.id, kind: kind, t: message.t, at: (performance.timeOrigin + performance.now()) / 1000 });
    if (seen.length > 2000) seen.splice(0, seen.length - 2000);
  }

  function connect() {
    const source = new EventSource("/api/events");
    const status = $("connection");
    source.onopen = () => { status.dataset.state = "open"; status.textContent = L.connected; };
    source.onerror = () => { status.dataset.state = "closed"; status.textContent = L.disconnected; };
    source.addEventListener("live", (e) => received("live", e, (m) => drawLive(m.live)));
    source.addEventListener("kept", (e) => received("kept", e, (m) => {
      offset = m.t - Date.now() / 1000;
      drawKept(m.kept);
    }));
  }

  setInterval(tickTimers, 250);
  connect();
})();
