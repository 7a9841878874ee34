// loopguard serve: the console's only script. It builds every element with
// textContent (never markup from the server), and signs each decision with
// the passkey over the exact call it shows.
"use strict";

const $ = (sel) => document.querySelector(sel);
const main = $("#main");

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

let toastTimer = 0;
function toast(msg, isError) {
  const t = $("#toast");
  t.textContent = msg;
  t.className = isError ? "error" : "";
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, isError ? 12000 : 6000);
}

// The sign-in is a token in this tab's memory and sessionStorage (which
// belongs to this origin alone: scheme, host and port), sent as a header;
// never a cookie, which the browser would send to every port of localhost.
let session = sessionStorage.getItem("loopguard.session") || "";
function setSession(tok) {
  session = tok || "";
  if (session) sessionStorage.setItem("loopguard.session", session);
  else sessionStorage.removeItem("loopguard.session");
}

function headers(json) {
  const h = {};
  if (session) h.Authorization = "Bearer " + session;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

async function api(path, body) {
  const init = body === undefined ? { credentials: "omit", headers: headers(false) }
    : { method: "POST", credentials: "omit", headers: headers(true), body: JSON.stringify(body) };
  const r = await fetch(path, init);
  let j = {};
  try { j = await r.json(); } catch (e) { /* empty */ }
  if (r.status === 401) setSession("");
  if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
  return j;
}

// base64url <-> bytes, as the server's WebAuthn options and answers use.
function fromB64u(s) {
  s = s.replace(/-/g, "+").replace(/_/g, "/");
  while (s.length % 4) s += "=";
  const b = atob(s), u = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) u[i] = b.charCodeAt(i);
  return u.buffer;
}
function toB64u(buf) {
  const u = new Uint8Array(buf);
  let s = "";
  for (const c of u) s += String.fromCharCode(c);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function createPasskey(options) {
  const pk = options.publicKey;
  pk.challenge = fromB64u(pk.challenge);
  pk.user.id = fromB64u(pk.user.id);
  for (const c of pk.excludeCredentials || []) c.id = fromB64u(c.id);
  const cred = await navigator.credentials.create({ publicKey: pk });
  const r = cred.response;
  return {
    id: cred.id, rawId: toB64u(cred.rawId), type: cred.type,
    response: { clientDataJSON: toB64u(r.clientDataJSON), attestationObject: toB64u(r.attestationObject),
      transports: r.getTransports ? r.getTransports() : [] },
    clientExtensionResults: cred.getClientExtensionResults(),
  };
}

async function usePasskey(options) {
  const pk = options.publicKey;
  pk.challenge = fromB64u(pk.challenge);
  for (const c of pk.allowCredentials || []) c.id = fromB64u(c.id);
  const cred = await navigator.credentials.get({ publicKey: pk });
  const r = cred.response;
  return {
    id: cred.id, rawId: toB64u(cred.rawId), type: cred.type,
    response: { clientDataJSON: toB64u(r.clientDataJSON), authenticatorData: toB64u(r.authenticatorData),
      signature: toB64u(r.signature), userHandle: r.userHandle ? toB64u(r.userHandle) : undefined },
    clientExtensionResults: cred.getClientExtensionResults(),
  };
}

// --- registration, from the link loopguard passkey add printed ---

function enrollView() {
  const token = location.hash.slice(1);
  history.replaceState(null, "", "/enroll"); // the secret leaves the address bar
  const msg = el("p", { class: "muted", text: "" });
  const btn = el("button", { class: "primary", text: "Create a passkey for this console" });
  main.replaceChildren(el("section", { class: "panel" },
    el("h1", { text: "Register a passkey" }),
    el("p", { text: "This link came from loopguard passkey add in your terminal. It works once, for a few minutes. Your passkey (with its PIN, fingerprint or face) will sign every decision you make here." }),
    btn, msg));
  btn.onclick = async () => {
    btn.disabled = true;
    try {
      const b = await api("/api/enroll/begin", { token });
      msg.textContent = "Creating the passkey " + JSON.stringify(b.name) + "…";
      const credential = await createPasskey(b.options);
      const f = await api("/api/enroll/finish", { token, credential });
      main.replaceChildren(el("section", { class: "panel", "data-enrolled": "1" },
        el("h1", { text: "Passkey registered" }),
        el("p", { text: "The passkey " + JSON.stringify(f.name) + " can now sign decisions." }),
        el("a", { href: "/", text: "Open the console" })));
    } catch (e) {
      msg.textContent = e.message;
      msg.setAttribute("data-error", "1");
      toast(e.message, true);
    }
  };
}

// --- sign-in ---

async function signInView(st) {
  document.title = "loopguard";
  $("#count").textContent = "";
  if (st.passkeys === 0) {
    main.replaceChildren(el("section", { class: "panel" },
      el("h1", { text: "No passkey yet" }),
      el("p", { text: "In your own terminal (not inside the agent), run:" }),
      el("pre", { text: "loopguard passkey add" }),
      el("p", { text: "and open the one-time link it prints, in this browser." })));
    return;
  }
  const btn = el("button", { class: "primary", "data-action": "signin", text: "Sign in with your passkey" });
  main.replaceChildren(el("section", { class: "panel" },
    el("h1", { text: "Sign in" }),
    el("p", { class: "muted", text: "The calls your agent waits on are shown after you sign in." }), btn));
  btn.onclick = async () => {
    btn.disabled = true;
    try {
      const b = await api("/api/login/begin", {});
      const credential = await usePasskey(b.options);
      const f = await api("/api/login/finish", { handle: b.handle, credential });
      setSession(f.session);
      start();
    } catch (e) {
      btn.disabled = false;
      toast(e.message, true);
    }
  };
}

// --- the queue: one call at a time, as loopguard review shows them ---
//
// The page decides only what the human sees. One call is in focus; a call
// that arrives, or a change anywhere else in the queue, never moves,
// replaces or covers it (only the count in the header changes). When the
// call in focus itself changes (its content, or it is decided elsewhere),
// or the focus moves to another call, the decision buttons are disarmed:
// a click is taken only if the pointer went down at least armMs after what
// is shown was drawn and, for a mouse, moved since then (a click from a
// pointer that rested while the call under it changed is ignored). Each
// decision sends the digest and the view of the call drawn, and the
// server refuses any other.

const armMs = 700;
let stream = null;   // the live queue's AbortController
let calls = [];      // the queue as last received
let view = null;     // what is shown: {c, at, version, busy, gone, fp}
let version = 0;
let ignored = 0;     // clicks refused by the guard (for the page's tests)
const pointer = { x: NaN, y: NaN, moved: -Infinity, down: null };

document.addEventListener("pointermove", (e) => {
  if (e.clientX !== pointer.x || e.clientY !== pointer.y) {
    pointer.x = e.clientX; pointer.y = e.clientY; pointer.moved = e.timeStamp;
  }
}, true);
document.addEventListener("pointerdown", (e) => {
  pointer.down = { version: view ? view.version : -1, ok: armedFor(e) };
}, true);

// armedFor says whether pointer event e may decide what is shown.
function armedFor(e) {
  if (!view || e.timeStamp - view.at < armMs) return false;
  return e.pointerType !== "mouse" || pointer.moved > view.at;
}

// guarded runs fn for a click on a decision button only if the guard
// takes it; else it says why and nothing is decided.
function guarded(fn) {
  return (e) => {
    const d = pointer.down;
    pointer.down = null;
    let ok;
    if (e.detail === 0) ok = !!view && performance.now() - view.at >= armMs; // keyboard
    else ok = !!d && !!view && d.version === view.version && d.ok;
    if (!ok || !view || view.busy || view.gone) {
      ignored++;
      main.setAttribute("data-ignored", String(ignored));
      toast("Not taken: what is on screen changed just before this click. Read the call, then decide.", true);
      return;
    }
    fn();
  };
}

function lines(cls, ls) {
  const pre = el("pre", { class: cls });
  for (const l of ls) {
    const span = el("span", { text: l.t + "\n" });
    if (l.k) span.className = l.k;
    pre.append(span);
  }
  return pre;
}

function left(c) {
  const ms = Date.parse(c.held_until) - Date.now();
  if (!(ms > 0)) return "wait over";
  const s = Math.round(ms / 1000);
  return (s >= 60 ? Math.floor(s / 60) + "m" : "") + (s % 60) + "s left";
}

// fp is what the page draws of c: a change of it is a change of what is
// shown.
function fp(c) {
  return JSON.stringify([c.id, c.digest, c.held, c.host, c.head, c.body, c.rule, c.no_rule, c.too_long, c.view]);
}

function callCard(c) {
  const danger = c.head.some((l) => l.k === "danger");
  const card = el("article", { class: "call" + (danger ? " danger" : ""), "data-id": c.id, "data-digest": c.digest });
  const status = el("div", { class: "status" });
  if (c.held) status.append(el("span", { class: "held", "data-held": "1", text: "HELD: the agent waits for you, " + left(c) }));
  else status.append(el("span", { text: "Not held: after an approval the agent retries the identical call." }));
  if (c.host) status.append(el("span", { text: "machine: " + c.host }));
  // Always there, hidden (its room kept) while no other call waits: a
  // call that arrives changes nothing but its visibility.
  const skip = el("button", { class: "skip", "data-action": "skip", text: "Next waiting call ›" });
  skip.style.visibility = calls.length > 1 ? "visible" : "hidden";
  skip.onclick = () => { if (view && !view.busy) show(nextAfter(c.id)); };
  status.append(skip);
  card.append(status, lines("head", c.head));
  const kb = Math.max(1, Math.round(c.bytes / 1024));
  if (c.too_long) {
    card.append(el("p", { class: "toolong", "data-too-long": "1", text: c.too_long }));
  } else {
    card.append(el("p", { class: "size muted", "data-size": String(c.bytes),
      text: "The whole call: " + c.lines + " lines, " + kb + " KiB. Nothing is folded: scroll the box to read all of it." }));
    card.append(lines("body", c.body));
  }
  const acts = el("div", { class: "actions" });
  if (!c.too_long) {
    const approve = el("button", { class: "approve", "data-action": "approve", text: "Approve once" });
    approve.onclick = guarded(() => decide(c, "approve"));
    acts.append(approve);
    if (c.rule) {
      const grant = el("button", { class: "grant", "data-action": "grant" }, "Approve and grant", el("code", { text: c.rule }));
      grant.onclick = guarded(() => decide(c, "grant", c.rule));
      acts.append(grant);
    }
  }
  const deny = el("button", { class: "deny", "data-action": "deny", text: "Deny…" });
  acts.append(deny);
  card.append(acts);
  if (!c.rule && c.no_rule && !c.too_long) card.append(el("p", { class: "norule", text: "No rule is offered: " + c.no_rule }));
  const note = el("textarea", { rows: 2, maxLength: 500, placeholder: "Reason for the agent (optional)", "data-field": "note" });
  const confirm = el("button", { class: "deny-confirm", "data-action": "deny-confirm", text: "Deny, signed with your passkey" });
  const form = el("div", { class: "denyform" }, note, confirm);
  form.hidden = true;
  deny.onclick = () => { form.hidden = !form.hidden; if (!form.hidden) note.focus(); };
  confirm.onclick = guarded(() => decide(c, "deny", "", note.value));
  card.append(form);
  return card;
}

// nextAfter is the call after id in the queue (around), or the first.
function nextAfter(id) {
  const i = calls.findIndex((c) => c.id === id);
  return calls.length ? calls[(i + 1) % calls.length] : null;
}

// show draws call c in focus (or the empty panel): a change of what is
// shown, so the decision buttons are disarmed for armMs.
function show(c) {
  version++;
  if (!c) {
    view = null;
    main.replaceChildren(el("section", { class: "panel", "data-empty": "1" },
      el("h1", { text: "Nothing waits" }),
      el("p", { class: "muted", text: "Calls your agent is held on appear here as they arrive, one at a time." })));
    return;
  }
  const card = callCard(c);
  view = { c, at: performance.now(), version, busy: false, gone: false, fp: fp(c), card };
  main.replaceChildren(card);
  const v = view;
  setTimeout(() => { if (view === v) card.setAttribute("data-armed", "1"); }, armMs);
}

function counts() {
  $("#count").textContent = calls.length ? calls.length + " waiting" : "";
  const skip = view && view.card.querySelector('[data-action="skip"]');
  if (skip) skip.style.visibility = calls.length > 1 ? "visible" : "hidden";
  document.title = calls.length ? "(" + calls.length + ") loopguard" : "loopguard";
}

// render follows the queue without moving the call in focus.
function render() {
  counts();
  if (!view) return show(calls[0] || null);
  if (view.busy) return; // a decision is being signed: see after it
  const now = calls.find((c) => c.id === view.c.id);
  if (!now) {
    if (view.gone) return;
    view.gone = true;
    view.version = ++version;
    const card = view.card;
    card.removeAttribute("data-armed");
    card.setAttribute("data-gone", "1");
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    const next = el("button", { class: "primary", "data-action": "next", text: calls.length ? "Show the next waiting call" : "Back to the queue" });
    next.onclick = () => show(calls[0] || null);
    card.prepend(el("p", { class: "gone", text: "This call was decided elsewhere, or its wait ended: nothing here can decide it." }), next);
    return;
  }
  if (fp(now) !== view.fp) show(now); // the call itself changed: drawn again, disarmed
}

async function decide(c, decision, rule, note) {
  const v = view;
  v.busy = true;
  const card = v.card;
  card.setAttribute("data-busy", "1");
  for (const b of card.querySelectorAll("button")) b.disabled = true;
  // The digest of the call drawn, and its view: what the page drew of it
  // (its rendering, warnings included); the server refuses a decision on
  // a call it would now draw otherwise.
  const req = { id: c.id, digest: c.digest, view: c.view, decision };
  if (rule) req.rule = rule;
  if (note) req.note = note;
  let done = false;
  try {
    const b = await api("/api/decision/begin", req);
    toast("Confirm with your passkey…");
    const credential = await usePasskey(b.options);
    const f = await api("/api/decision/finish", Object.assign({ nonce: b.nonce, credential }, req));
    toast(f.message);
    main.setAttribute("data-decided", c.id + " " + decision);
    done = true;
  } catch (e) {
    toast(e.message, true);
    card.setAttribute("data-error", e.message);
  } finally {
    card.removeAttribute("data-busy");
    if (view === v) {
      v.busy = false;
      if (done) {
        calls = calls.filter((x) => x.id !== c.id);
        counts();
        show(calls[0] || null);
      } else {
        for (const b of card.querySelectorAll("button")) b.disabled = false;
        render();
      }
    }
  }
}

// listen reads the live queue (server-sent events over fetch, so that the
// sign-in goes as a header).
async function listen() {
  if (stream) stream.abort();
  const ctl = new AbortController();
  stream = ctl;
  let r;
  try {
    r = await fetch("/api/events", { credentials: "omit", headers: headers(false), signal: ctl.signal });
  } catch (e) {
    $("#live").className = "live";
    return;
  }
  if (r.status === 401) { setSession(""); return start(); }
  if (!r.ok || !r.body) { $("#live").className = "live"; return; }
  const rd = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await rd.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const msg = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let ev = "message", data = "";
        for (const line of msg.split("\n")) {
          if (line.startsWith("event: ")) ev = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (ev === "queue") {
          $("#live").className = "live on";
          const q = JSON.parse(data);
          calls = q.calls;
          if (q.error) toast(q.error, true);
          render();
        } else if (ev === "signed-out") {
          setSession("");
          ctl.abort();
          return start();
        }
      }
    }
  } catch (e) { /* aborted or cut */ }
  $("#live").className = "live";
  if (stream === ctl && !ctl.signal.aborted) setTimeout(() => { if (stream === ctl) listen(); }, 2000);
}

setInterval(() => {
  if (!view) return;
  const s = view.card.querySelector("[data-held]");
  if (s) s.textContent = "HELD: the agent waits for you, " + left(view.c);
}, 1000);

async function start() {
  if (stream) { stream.abort(); stream = null; }
  view = null;
  if (location.pathname === "/enroll") return enrollView();
  let st;
  try {
    st = await api("/api/state");
  } catch (e) {
    main.replaceChildren(el("p", { class: "panel", text: e.message }));
    return;
  }
  if (!st.signed_in) return signInView(st);
  listen();
}

window.addEventListener("hashchange", start); // another registration link opened in this tab
start();
