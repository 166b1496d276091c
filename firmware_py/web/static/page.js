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

  // Words from outside (what was heard, the list, notes, the record, the tools' answers) may hold
  // control or bidirectional characters stored before hearth took them out at the door: one U+202E
  // shows "milk\u202eevil" as "milklive" and turns around everything after it on the line. They
  // are shown as their escapes, as `hearth history` prints them, and each piece of words sits in
  // its own <bdi>, so that even right-to-left text can only order itself, never what is beside it.
  // Invisible characters (a BOM, zero-width spaces, a soft hyphen, Hangul fillers) are escaped too:
  // "\ufeffcumin" must not pass for "cumin". The zero-width joiner is left, as emoji are built with it.
  const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2069\u3164\ufeff\uffa0]/g;

  function shown(text) {
    return String(text).replace(UNSAFE, (ch) => {
      const code = ch.charCodeAt(0);
      return code < 0x100 ? "\\x" + code.toString(16).padStart(2, "0") : "\\u" + code.toString(16).padStart(4, "0");
    });
  }

  function words(text) {
    return el("bdi", null, shown(text));
  }

  function withWords(tag, cls, text) {
    const node = el(tag, cls);
    node.append(words(text));
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
    state.textContent = L["state_" + live.state] || shown(live.state);
    const heard = $("heard");
    heard.textContent = live.heard ? shown(live.heard) : (live.state === "listening" ? L.hearing : "");
    heard.dataset.final = String(live.final);
    // Words that came as text (Home Assistant's handle) were not heard in the kitchen.
    heard.dataset.typed = String(!!live.typed);
    $("heard-label").textContent = live.typed ? L.typed : L.heard;
    fill($("thoughts"), live.thoughts, (t) => {
      const li = withWords("li", "thought", t.heard);
      li.append(" → ", t.tool ? words(t.tool + "(" + args(t.args) + ")") : "—");
      return li;
    });
    $("thinking-box").hidden = live.thoughts.length === 0;
    const fetching = Object.entries(live.fetching);
    fill($("fetching"), fetching, ([tool, f]) => {
      const li = withWords("li", "fetch", tool + "(" + args(f.args) + ")");
      li.dataset.status = f.status;
      li.append(el("span", "badge", L["status_" + f.status] || f.status));
      return li;
    });
    $("fetching-box").hidden = fetching.length === 0;
    // Who answers is known once the words are final; before any turn nobody has answered anything.
    $("answered").hidden = !live.final;
    const by = live.answered_by.split(" ");
    $("answered-by").textContent = shown([L[by[0]] || by[0], ...by.slice(1)].join(" "));
    fill($("calls"), live.calls, (c) => {
      const li = withWords("li", "call", c.tool + "(" + args(c.args) + ")");
      li.dataset.status = c.status;
      li.append(el("span", "badge", L["status_" + c.status] || c.status));
      return li;
    });
    $("calls-box").hidden = live.calls.length === 0;
    fill($("units"), live.units, (u) => {
      const li = withWords("li", "unit", u.text);
      li.dataset.status = u.status;
      li.dataset.kind = u.kind;
      li.append(el("span", "badge", u.status === "cut" ? L.unit_cut : u.status === "sent" ? L.unit_sent : L.unit_heard));
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
      li.append(withWords("span", "name", t.name));
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
      tick.setAttribute("aria-label", L.tick + ": " + shown(item.item));
      tick.addEventListener("click", () => change("/api/list/complete", { item: item.item }, tick));
      li.append(tick, withWords("span", "what", item.item));
      if (item.quantity) li.append(withWords("span", "quantity", item.quantity));
      return li;
    });
    $("list-empty").hidden = kept.list.length > 0;

    fill($("notes"), kept.notes, (n) => withWords("li", "note", n.text));
    $("notes-empty").hidden = kept.notes.length > 0;

    // What hearth can switch and read in Home Assistant (shown only where one is connected).
    const home = kept.home || [];
    fill($("home"), home, (e) => {
      const li = withWords("li", "device", e.name);
      li.dataset.entity = e.entity_id;
      li.dataset.state = e.state;
      if (e.area) li.append(el("span", "badge", shown(e.area)));
      li.append(el("span", "state", shown(e.state)));
      return li;
    });
    $("home-section").hidden = home.length === 0;

    // A unit of the record that was not simply spoken: cut off, never said, or sent as text.
    const recordStatus = (status) => ({cut: L.unit_cut, told: L.unit_sent, unspoken: L.unit_unspoken})[status] || status;
    const record = $("record");
    record.replaceChildren(...kept.record.slice().reverse().map((turn) => {
      const box = el("div", "turn");
      box.dataset.turn = String(turn.turn);
      for (const e of turn.entries) {
        if (e.role === "turn" || (e.role === "tool" && e.status === "started")) continue;
        const line = withWords("p", "entry " + e.role, e.text);
        if (e.role === "tool") line.append(" · " + e.status);
        // A change that failed says why, as the page was told when it was made.
        if (e.role === "tool" && e.why) line.append(" · ", words(e.why));
        line.dataset.status = e.status;
        if (e.origin === "page") line.append(el("span", "badge", L.from_page));
        else if (e.role === "user" && e.status === "typed") line.append(el("span", "badge", L.unit_sent));
        else if (e.role === "assistant" && e.status !== "spoken") line.append(el("span", "badge", recordStatus(e.status)));
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
      img.alt = last.transcript ? shown(last.transcript) : outcome;
      const caption = $("timeline-caption");
      caption.replaceChildren();
      if (last.transcript) caption.append("“", words(last.transcript), "” · ");
      caption.append(outcome);
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
      said.textContent = shown(answer.text);
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

  // Until the first state arrives the page shows nothing of what is kept (no "the list is empty"
  // while sixteen items are listed): only that it is connecting.
  let drawnOnce = false;

  function connection(state, text) {
    const status = $("connection");
    status.dataset.state = state;
    status.textContent = text;
  }

  function showRefusal(reason) {
    connection("refused", L.refused);
    const line = $("refused");
    line.textContent = shown(reason);
    line.hidden = false;
  }

  // The browser gives up on a stream the server answers with an error (503 when too many pages are
  // open, 401 without the token) and tells the page nothing of why: ask once by hand to read the
  // server's one line, show it, and try again when the server says to.
  async function whyRefused() {
    let wait_s = 5;
    try {
      const controller = new AbortController();
      const response = await fetch("/api/events", { credentials: "same-origin", cache: "no-store", signal: controller.signal });
      if (response.ok) {
        controller.abort(); // there is room again: open the stream anew
        wait_s = 1;
      } else {
        wait_s = Number(response.headers.get("retry-after")) || wait_s;
        showRefusal((await response.text()).trim() || String(response.status));
      }
    } catch (err) {
      showRefusal(String(err));
    }
    setTimeout(connect, wait_s * 1000);
  }

  function connect() {
    const source = new EventSource("/api/events");
    source.onopen = () => {
      connection("open", L.connected);
      $("refused").hidden = true;
    };
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        whyRefused();
      } else if (drawnOnce) {
        connection("closed", L.disconnected);
      } else {
        connection("connecting", L.connecting);
      }
    };
    source.addEventListener("live", (e) => received("live", e, (m) => drawLive(m.live)));
    source.addEventListener("kept", (e) => received("kept", e, (m) => {
      offset = m.t - Date.now() / 1000;
      drawKept(m.kept);
      drawnOnce = true;
    }));
  }

  setInterval(tickTimers, 250);
  connect();
})();
