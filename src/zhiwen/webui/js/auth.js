// API Key: once the server has keys (or an admin token) configured, every API call needs
// "Authorization: Bearer <key>". The page asks for the key when a call answers 401 and keeps it
// for this tab only (sessionStorage: gone when the tab closes, never sent to another site).
// Every call goes through fetchWithKey (util.js api, sse.js) or authHeaders (the upload's XHR).

const STORAGE_KEY = "zhiwen.api.key";

export function apiKey() {
  try {
    return sessionStorage.getItem(STORAGE_KEY) || "";
  } catch {
    return ""; // storage blocked: the key lives only as long as this page
  }
}

function rememberKey(key) {
  try {
    if (key) sessionStorage.setItem(STORAGE_KEY, key);
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    /* storage blocked: nothing to keep */
  }
}

function hasOwnAuthorization(headers) {
  return Object.keys(headers || {}).some((h) => h.toLowerCase() === "authorization");
}

/** ``headers`` plus the tab's key (a caller's own Authorization, e.g. the admin token, wins). */
export function authHeaders(headers = {}) {
  const key = apiKey();
  if (!key || hasOwnAuthorization(headers)) return { ...headers };
  return { ...headers, Authorization: `Bearer ${key}` };
}

let asking = null;

/** Show the key dialog with ``message``; resolves true once a key was entered, false if cancelled. */
export function askForKey(message = "") {
  if (asking) return asking; // several calls refused at once share one dialog
  const dialog = document.getElementById("key-dialog");
  if (!dialog || typeof dialog.showModal !== "function") return Promise.resolve(false);
  const form = document.getElementById("key-form");
  const input = document.getElementById("key-input");
  document.getElementById("key-dialog-message").textContent =
    message || "此服务已启用访问控制，请输入管理员提供的 API Key。";
  input.value = apiKey();
  asking = new Promise((resolve) => {
    const finish = (entered) => {
      form.removeEventListener("submit", onSubmit);
      dialog.removeEventListener("close", onClose);
      asking = null;
      resolve(entered);
    };
    const onSubmit = (e) => {
      e.preventDefault();
      const key = input.value.trim();
      if (!key) return input.focus();
      rememberKey(key);
      dialog.close("entered");
    };
    const onClose = () => finish(dialog.returnValue === "entered");
    form.addEventListener("submit", onSubmit);
    dialog.addEventListener("close", onClose);
    dialog.returnValue = "";
    dialog.showModal();
    input.focus();
  });
  return asking;
}

async function refusalMessage(resp) {
  try {
    const body = await resp.clone().json();
    return (body && (body.message || (body.error && body.error.message))) || "";
  } catch {
    return "";
  }
}

// a 401 from the admin API means its own token (the admin view asks for that one)
const asksOwnToken = (path) => path.startsWith("/admin/");

/**
 * fetch with the tab's API key. A 401 opens the key dialog and, once a key is entered, sends
 * the request again (at most three tries); cancelled, the 401 is returned to the caller.
 * Network errors are thrown as fetch throws them.
 */
export async function fetchWithKey(path, init = {}) {
  const own = hasOwnAuthorization(init.headers);
  for (let attempt = 0; ; attempt += 1) {
    const resp = await fetch(path, { ...init, headers: authHeaders(init.headers) });
    if (resp.status !== 401 || own || asksOwnToken(path) || attempt >= 2) return resp;
    if (!(await askForKey(await refusalMessage(resp)))) return resp;
  }
}

/** The dialog's cancel button, and the header's "API Key" button: enter or change the key,
 * then reload the page with it. */
export function initKeyDialog(button) {
  const dialog = document.getElementById("key-dialog");
  const cancel = document.getElementById("key-cancel");
  if (dialog && cancel) cancel.addEventListener("click", () => dialog.close(""));
  if (!button) return;
  button.addEventListener("click", async () => {
    if (await askForKey("输入 API Key（只保存在当前标签页，关闭即清除）。")) location.reload();
  });
}
