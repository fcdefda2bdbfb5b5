// What the owner's panels share: a KB's API paths, requests that are not JSON (a file upload, a
// CSV body), downloads that carry the tab's key (an <a href> could not), list fields (one item a
// line), times, and a panel's 「加载中 / 出错」 states.

import { fetchWithKey } from "./auth.js";
import { ApiError, api, el, errorBox, errorFrom, networkError } from "./util.js";

/** ``/api/v1/kbs/<kb><sub>`` with the name escaped. */
export const kbPath = (kb, sub = "") => `/api/v1/kbs/${encodeURIComponent(kb)}${sub}`;

/** A query string of the non-empty ``params`` ("" when none). */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

async function envelope(resp) {
  if (!resp.ok) throw await errorFrom(resp);
  const json = await resp.json().catch(() => null);
  if (!json) throw new ApiError(`服务返回了非 JSON 响应（HTTP ${resp.status}）`, { status: resp.status });
  if (json.code !== 0) throw new ApiError(json.message || "请求失败", { code: json.code, data: json.data });
  return json.data;
}

/** POST a file as multipart (field ``file``) with the form's other ``fields`` (strings; empty
 * ones left out); returns the envelope's data. */
export async function sendFile(path, file, fields = {}, field = "file") {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields))
    if (value !== null && value !== undefined && value !== "") form.append(name, String(value));
  form.append(field, file, file.name);
  let resp;
  try {
    resp = await fetchWithKey(path, { method: "POST", body: form });
  } catch (e) {
    throw networkError(e);
  }
  return envelope(resp);
}

/** PUT a file as the body, bytes as they are (the server reads UTF-8 or GB18030, what a Chinese
 * Excel saves), with its content type; returns the envelope's data. */
export async function sendBody(path, file, type = "text/csv") {
  let resp;
  try {
    resp = await fetchWithKey(path, { method: "PUT", headers: { "Content-Type": type }, body: file });
  } catch (e) {
    throw networkError(e);
  }
  return envelope(resp);
}

/** Fetch ``path`` with the tab's key and save it as ``filename`` (the browser's download). */
export async function download(path, filename) {
  let resp;
  try {
    resp = await fetchWithKey(path);
  } catch (e) {
    throw networkError(e);
  }
  if (!resp.ok) throw await errorFrom(resp);
  const url = URL.createObjectURL(await resp.blob());
  const a = el("a", { href: url, download: filename, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** One item a line (blank lines dropped, each trimmed). */
export const lines = (text) =>
  String(text || "")
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter(Boolean);

/** Unix seconds (or an ISO string) → 「2026-11-28 09:30」 in the browser's zone. */
export function when(at) {
  if (at === null || at === undefined || at === "") return "—";
  const d = typeof at === "number" ? new Date(at * 1000) : new Date(at);
  if (Number.isNaN(d.getTime())) return String(at);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Today minus ``days`` − 1 days as YYYY-MM-DD (the first day of a window of ``days`` days). */
export function daysAgo(days) {
  const d = new Date();
  d.setDate(d.getDate() - Math.max(1, days) + 1);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/**
 * Run ``load`` with ``box`` showing 「加载中」, then what it returns (nodes), or the error.
 * Returns whether it loaded.
 */
export async function loadInto(box, load) {
  box.dataset.busy = "true";
  box.setAttribute("aria-busy", "true");
  try {
    const nodes = await load();
    box.replaceChildren(...[nodes].flat().filter(Boolean));
    return true;
  } catch (err) {
    if (err.name === "AbortError") return false;
    box.replaceChildren(errorBox(err, accessHint(err)));
    return false;
  } finally {
    box.dataset.busy = "false";
    box.removeAttribute("aria-busy");
  }
}

/** What to do about a refused owner's call (401/403: a key with write access to the KB). */
export function accessHint(err) {
  if (err.status === 401 || err.status === 403)
    return "。管理知识库需要对它有写权限的 API Key（页面右上角「API Key」）。";
  if (err.status === 404 || err.status === 405) return "。服务可能还不支持这项功能（请升级 zhiwen）。";
  return "";
}

/** A small labelled form field: <label>text<control></label>. */
export const field = (label, control, cls = "field") =>
  el("label", { class: cls }, el("span", {}, label), control);

/** ``api`` with the KB's path. */
export const kbApi = (kb, sub, options) => api(kbPath(kb, sub), options);

/** The <option>s of an app filter: every app, 通用问答 (the log's ``qa``), then each installed app. */
export function appOptions(app) {
  const apps = [
    ["", "全部应用"],
    ["qa", "通用问答"],
    ...(app.config.apps || []).map((a) => [a.name, a.title]),
  ];
  return apps.map(([value, label]) => el("option", { value }, label));
}
