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

async function api(path, body) {
  const init = body === undefined ? { credentials: "same-origin" }
    : { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, init);
  let j = {};
  try { j = await r.json(); } catch (e) { /* empty */ }
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
      await api("/api/login/finish", { handle: b.handle, credential });
      window.addEventListener("hashchange", start); // another registration link opened in this tab
start();
    } catch (e) {
      btn.disabled = false;
      toast(e.message, true);
    }
  };
}

// --- the queue ---

let events = null;
let calls = [];
const openDeny = new Set();

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

function callCard(c) {
  const danger = c.head.some((l) => l.k === "danger");
  const card = el("article", { class: "call" + (danger ? " danger" : ""), "data-id": c.id, "data-digest": c.digest });
  const status = el("div", { class: "status" });
  if (c.held) status.append(el("span", { class: "held", "data-held": "1", text: "HELD: the agent waits for you, " + left(c) }));
  else status.append(el("span", { text: "Not held: after an approval the agent retries the identical call." }));
  if (c.host) status.append(el("span", { text: "machine: " + c.host }));
  card.append(status, lines("head", c.head), lines("body", c.body));
  const acts = el("div", { class: "actions" });
  const approve = el("button", { class: "approve", "data-action": "approve", text: "Approve once" });
  approve.onclick = () => decide(card, c, "approve");
  acts.append(approve);
  if (c.rule) {
    const grant = el("button", { class: "grant", "data-action": "grant" }, "Approve and grant", el("code", { text: c.rule }));
    grant.onclick = () => decide(card, c, "grant", c.rule);
    acts.append(grant);
  }
  const deny = el("button", { class: "deny", "data-action": "deny", text: "Deny…" });
  acts.append(deny);
  card.append(acts);
  if (!c.rule && c.no_rule) card.append(el("p", { class: "norule", text: "No rule is offered: " + c.no_rule }));
  const note = el("textarea", { rows: 2, maxLength: 500, placeholder: "Reason for the agent (optional)", "data-field": "note" });
  const confirm = el("button", { class: "deny-confirm", "data-action": "deny-confirm", text: "Deny, signed with your passkey" });
  const form = el("div", { class: "denyform" }, note, confirm);
  form.hidden = !openDeny.has(c.id);
  deny.onclick = () => { form.hidden = !form.hidden; if (form.hidden) openDeny.delete(c.id); else { openDeny.add(c.id); note.focus(); } };
  confirm.onclick = () => decide(card, c, "deny", "", note.value);
  card.append(form);
  return card;
}

function render() {
  $("#count").textContent = calls.length ? calls.length + " waiting" : "";
  document.title = calls.length ? "(" + calls.length + ") loopguard" : "loopguard";
  if (!calls.length) {
    main.replaceChildren(el("section", { class: "panel", "data-empty": "1" },
      el("h1", { text: "Nothing waits" }),
      el("p", { class: "muted", text: "Calls your agent is held on appear here as they arrive." })));
    return;
  }
  const busy = main.querySelector("[data-busy]");
  if (busy) return; // a decision is being signed: redraw after it
  main.replaceChildren(...calls.map(callCard));
}

async function decide(card, c, decision, rule, note) {
  card.setAttribute("data-busy", "1");
  for (const b of card.querySelectorAll("button")) b.disabled = true;
  const req = { id: c.id, digest: c.digest, decision };
  if (rule) req.rule = rule;
  if (note) req.note = note;
  try {
    const b = await api("/api/decision/begin", req);
    toast("Confirm with your passkey…");
    const credential = await usePasskey(b.options);
    const f = await api("/api/decision/finish", Object.assign({ nonce: b.nonce, credential }, req));
    openDeny.delete(c.id);
    toast(f.message);
    card.setAttribute("data-decided", decision);
  } catch (e) {
    toast(e.message, true);
    card.setAttribute("data-error", e.message);
  } finally {
    card.removeAttribute("data-busy");
    for (const b of card.querySelectorAll("button")) b.disabled = false;
    render();
  }
}

function listen() {
  if (events) events.close();
  events = new EventSource("/api/events");
  events.addEventListener("queue", (ev) => {
    $("#live").className = "live on";
    const q = JSON.parse(ev.data);
    calls = q.calls;
    if (q.error) toast(q.error, true);
    render();
  });
  events.addEventListener("signed-out", () => { events.close(); start(); });
  events.onerror = () => { $("#live").className = "live"; };
}

setInterval(() => {
  for (const c of calls) {
    const s = main.querySelector('[data-id="' + CSS.escape(c.id) + '"] [data-held]');
    if (s) s.textContent = "HELD: the agent waits for you, " + left(c);
  }
}, 1000);

async function start() {
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
