// Small helpers shared by every view: DOM building, number formats, busy marks, the JSON API.
// Every API answer is the envelope {code, message, data}; a failure throws ApiError with the
// server's Chinese message (and the field it names, when it names one). Calls carry the tab's
// API key and ask for one on a 401 (auth.js).

import { fetchWithKey } from "./auth.js";

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

/** el("div", {class: "x", "data-testid": "y", onclick: fn}, child, "text", …) */
export function el(tag, attrs = {}, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") n.className = v;
    else if (k.startsWith("on") && typeof v === "function") n.addEventListener(k.slice(2), v);
    else if (k === "text") n.textContent = v;
    else n.setAttribute(k, v === true ? "" : String(v));
  }
  append(n, children);
  return n;
}

/** A small table in its scrolling wrapper: column headings, then the body's <tr> rows. */
export function miniTable(headings, rows) {
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      { class: "mini" },
      el("thead", {}, el("tr", {}, headings.map((h) => el("th", { scope: "col" }, String(h))))),
      el("tbody", {}, rows),
    ),
  );
}

function append(n, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false || c === "") continue;
    if (Array.isArray(c)) append(n, c);
    else n.append(c instanceof Node ? c : String(c));
  }
}

const nf2 = new Intl.NumberFormat("zh-CN", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const nf0 = new Intl.NumberFormat("zh-CN", { maximumFractionDigits: 0 });
const nfAuto = new Intl.NumberFormat("zh-CN", { maximumFractionDigits: 4 });

/** 8967.34 → "8,967.34" */
export const money = (x) => (typeof x === "number" && isFinite(x) ? nf2.format(x) : "—");
export const int = (x) => (typeof x === "number" && isFinite(x) ? nf0.format(x) : "—");
export const num = (x) => (typeof x === "number" && isFinite(x) ? nfAuto.format(x) : "—");
export const pct = (x, digits = 1) => (typeof x === "number" ? `${(x * 100).toFixed(digits)}%` : "—");
export const score = (x) => (typeof x === "number" ? x.toFixed(3) : "—");

/** Mark ``nodes`` busy (data-busy="true", aria-busy) while ``work`` runs. */
export async function busy(nodes, work) {
  const list = (Array.isArray(nodes) ? nodes : [nodes]).filter(Boolean);
  for (const n of list) {
    n.dataset.busy = "true";
    n.setAttribute("aria-busy", "true");
  }
  try {
    return await work();
  } finally {
    for (const n of list) {
      n.dataset.busy = "false";
      n.removeAttribute("aria-busy");
    }
  }
}

export class ApiError extends Error {
  constructor(message, { code = null, status = 0, data = null } = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.data = data;
  }
  /** The request field the server blamed (3001–3003, 2001), if any. */
  get field() {
    const d = this.data || {};
    if (d.extra && d.extra.field) return d.extra.field;
    if (d.field) return d.field;
    if (Array.isArray(d.errors) && d.errors[0] && d.errors[0].field) return d.errors[0].field;
    return null;
  }
}

/** Turn a fetch Response that is not a success envelope into an ApiError. */
export async function errorFrom(resp) {
  let body = null;
  try {
    body = await resp.json();
  } catch {
    /* not JSON */
  }
  if (body && typeof body.message === "string") {
    return new ApiError(body.message, { code: body.code, status: resp.status, data: body.data });
  }
  return new ApiError(`服务返回了无法识别的响应（HTTP ${resp.status}）`, { status: resp.status });
}

export function networkError(e) {
  if (e && e.name === "AbortError") return e;
  return new ApiError("无法连接服务，请确认 zhiwen serve 正在运行", { data: { detail: String(e) } });
}

/** GET (no body) or a JSON request; returns the envelope's ``data``. */
export async function api(path, { method, body, headers = {}, signal } = {}) {
  const init = { method: method || (body === undefined ? "GET" : "POST"), headers: { ...headers }, signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetchWithKey(path, init);
  } catch (e) {
    throw networkError(e);
  }
  if (!resp.ok) throw await errorFrom(resp);
  let json;
  try {
    json = await resp.json();
  } catch {
    throw new ApiError(`服务返回了非 JSON 响应（HTTP ${resp.status}）`, { status: resp.status });
  }
  if (json.code !== 0) throw new ApiError(json.message || "请求失败", { code: json.code, data: json.data });
  return json.data;
}

/** An inline error box with the server's message (role=alert, so screen readers say it). */
export function errorBox(err, extra = "") {
  const code = err && err.code ? `（错误码 ${err.code}）` : "";
  return el(
    "div",
    { class: "error", role: "alert", "data-testid": "error" },
    `${err.message || err}${code}`,
    extra,
  );
}

export function emptyNode(n) {
  while (n.firstChild) n.firstChild.remove();
  return n;
}

/** Copy text; falls back to a hidden textarea where the clipboard API is unavailable. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = el("textarea", { class: "visually-hidden", "aria-hidden": "true" });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand && document.execCommand("copy");
    ta.remove();
    return Boolean(ok);
  }
}

export function toast(message, kind = "") {
  const host = $("#toasts");
  if (!host) return;
  const t = el("div", { class: `toast ${kind}`, role: "status" }, message);
  host.append(t);
  setTimeout(() => t.remove(), 3500);
}

export const store = {
  get(key, fallback) {
    try {
      const raw = localStorage.getItem(key);
      return raw === null ? fallback : JSON.parse(raw);
    } catch {
      return fallback;
    }
  },
  set(key, value) {
    try {
      localStorage.setItem(key, JSON.stringify(value));
    } catch {
      /* quota or private mode: history is a convenience */
    }
  },
  remove(key) {
    try {
      localStorage.removeItem(key);
    } catch {
      /* ignore */
    }
  },
};

export function uid() {
  return (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`)
    .replace(/-/g, "")
    .slice(0, 16);
}

let emojiOk = null;
/** Whether the system has an emoji font (no font: the icon falls back to the name's first character). */
export function emojiRenders() {
  if (emojiOk !== null) return emojiOk;
  try {
    const c = document.createElement("canvas");
    c.width = c.height = 24;
    const g = c.getContext("2d");
    g.font = "20px sans-serif";
    g.textBaseline = "top";
    g.fillText("💰", 0, 0);
    const px = g.getImageData(0, 0, 24, 24).data;
    emojiOk = false;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3] && (Math.abs(px[i] - px[i + 1]) > 30 || Math.abs(px[i + 1] - px[i + 2]) > 30)) {
        emojiOk = true; // coloured pixels: a colour emoji font drew it
        break;
      }
    }
  } catch {
    emojiOk = false;
  }
  return emojiOk;
}

// status marks in the KB texts (✅ ❌) drawn from ordinary fonts when no emoji font is installed
const PLAIN_MARKS = { "✅": "✔", "❌": "✘", "✔️": "✔" };

/** ``text`` with ✅/❌ swapped for plain marks when the system cannot draw emoji (else as is). */
export function plainMarks(text) {
  if (emojiRenders()) return text;
  return text.replace(/✅|❌|✔️/g, (m) => PLAIN_MARKS[m]);
}

/** Two-step delete: the first click arms the button for 4 s, the second one deletes. */
export function deleteButton(label, onDelete) {
  const b = el("button", { type: "button", class: "ghost small danger" }, label);
  let armed = 0;
  b.addEventListener("click", async () => {
    if (!armed) {
      b.textContent = "确认删除？";
      armed = setTimeout(() => {
        armed = 0;
        b.textContent = label;
      }, 4000);
      return;
    }
    clearTimeout(armed);
    armed = 0;
    await onDelete(b);
  });
  return b;
}
