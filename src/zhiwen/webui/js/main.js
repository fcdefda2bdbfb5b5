// 知问 web UI: tabs, the one question box shared by the chat tabs (each view's placeholder, or its
// short one where the long one would be cut: a phone), themes, and the app state
// every view uses (config, KBs, running a request with its busy marks and a stop button).

import { createAdminView } from "./admin.js";
import { initKeyDialog } from "./auth.js";
import { createAdvisorView } from "./advisor.js";
import { createCalcView } from "./calc.js";
import { createChatView } from "./chat.js";
import { createKbView } from "./kbs.js";
import { createOwnerView } from "./owner.js";
import { createPolicyView } from "./policy.js";
import { createPropertyView } from "./property.js";
import { initSourceDialog } from "./sources.js";
import { $, $$, api, busy, el, errorBox, store } from "./util.js";

const composer = $("#composer");
const input = $("#chat-input");
const send = $("#chat-send");
const stop = $("#chat-stop");

const app = {
  config: { apps: [], endpoints: {}, llm_configured: false },
  kbs: [],
  controller: null,
  running: 0,
  appTitle(name) {
    const a = this.config.apps.find((x) => x.name === name);
    return a ? a.title : name;
  },
  /** Ask ``question`` in the active tab, as if typed in the question box (a 「您是不是想问」 click). */
  ask: (question) => {
    if (app.running) return;
    input.value = question;
    composer.requestSubmit();
  },
  signal() {
    return this.controller ? this.controller.signal : undefined;
  },
  async reloadKbs() {
    this.kbs = (await api("/api/v1/kbs")).kbs;
    for (const v of Object.values(views)) if (v.refreshKbs) v.refreshKbs();
  },
  /** Run ``work`` with the active view (or ``node``) and the question box marked busy. */
  async run(work, node = null) {
    const view = views[current];
    this.controller = new AbortController();
    this.running += 1;
    send.disabled = true;
    stop.hidden = false;
    try {
      return await busy([composer, node || (view && view.busyNode)], work);
    } finally {
      this.running -= 1;
      if (!this.running) {
        send.disabled = false;
        stop.hidden = true;
      }
    }
  },
};

const views = {
  chat: createChatView(app),
  property: createPropertyView(app),
  policy: createPolicyView(app),
  advisor: createAdvisorView(app),
  calc: createCalcView(app),
  kbs: createKbView(app),
  owner: createOwnerView(app),
};
let current = "chat";

// -- tabs -----------------------------------------------------------------------------------
const tabs = $$('[role="tab"]');

/**
 * Show the view a hash names: ``chat``, ``kbs`` …, or ``owner/<kb>/<panel>`` (a view without a
 * tab of its own: its ``tab`` stays selected).
 */
function select(hash, { focus = false } = {}) {
  const [head, ...rest] = String(hash || "").split("/");
  const name = views[head] ? head : "chat";
  const view = views[name];
  const tabName = view.tab || name;
  if (current !== name && views[current] && views[current].leave) views[current].leave();
  current = name;
  for (const tab of tabs) {
    const on = tab.dataset.view === tabName;
    tab.setAttribute("aria-selected", on ? "true" : "false");
    tab.tabIndex = on ? 0 : -1;
    if (on && focus) tab.focus();
  }
  for (const panel of $$("main > .view")) panel.hidden = panel.id !== `view-${name}`;
  const chatty = Boolean(view.ask);
  composer.hidden = !chatty;
  document.body.dataset.view = name;
  if (chatty) fitPlaceholder();
  const wanted = name === head ? String(hash) : name;
  if (location.hash !== `#${wanted}`) history.replaceState(null, "", `#${wanted}`);
  if (view.open) view.open(...rest.map((part) => decodeURIComponent(part)));
}

for (const tab of tabs) {
  tab.addEventListener("click", () => select(tab.dataset.view));
  tab.addEventListener("keydown", (e) => {
    const i = tabs.indexOf(tab);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    select(tabs[(to + tabs.length) % tabs.length].dataset.view, { focus: true });
  });
}
window.addEventListener("hashchange", () => select(location.hash.slice(1)));

// -- the question box -----------------------------------------------------------------------
let measure = null;

/** Whether ``text`` fits on the question box's one line (its font, less its padding). */
function fits(text) {
  const style = getComputedStyle(input);
  const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  measure = measure || document.createElement("canvas").getContext("2d");
  measure.font = `${style.fontSize} ${style.fontFamily}`;
  return measure.measureText(text).width <= room;
}

/** The view's placeholder, or its short one where the long one would be cut (a phone). */
function fitPlaceholder() {
  const view = views[current];
  if (!view || !view.ask || composer.hidden) return;
  const long = view.placeholder || "";
  input.placeholder = view.shortPlaceholder && !fits(long) ? view.shortPlaceholder : long;
}
window.addEventListener("resize", fitPlaceholder);

function grow() {
  input.style.height = "auto";
  input.style.height = `${Math.min(input.scrollHeight, 200)}px`;
}

composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const question = input.value.trim();
  const hint = $("#composer-hint");
  hint.replaceChildren();
  if (!question) {
    hint.append(el("span", { role: "alert" }, "请输入问题"));
    input.focus();
    return;
  }
  if (app.running) return;
  input.value = "";
  grow();
  const view = views[current];
  app.run(() => view.ask(question)).catch((err) => {
    hint.append(errorBox(err)); // refused before it was asked (a bad date): keep the question
    if (!input.value) input.value = question;
  });
});
input.addEventListener("keydown", (e) => {
  // Enter sends; Shift+Enter is a new line; never while an IME is composing (中文输入法)
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
    e.preventDefault();
    composer.requestSubmit();
  }
});
input.addEventListener("input", grow);
stop.addEventListener("click", () => app.controller && app.controller.abort());

// -- theme ----------------------------------------------------------------------------------
const THEMES = [
  ["", "跟随系统"],
  ["light", "浅色"],
  ["dark", "深色"],
];
const themeButton = $("#theme-toggle");

function applyTheme(theme) {
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
  const label = THEMES.find(([t]) => t === theme)[1];
  themeButton.textContent = `主题：${label}`;
  themeButton.setAttribute("aria-label", `切换主题（当前：${label}）`);
}
themeButton.addEventListener("click", () => {
  const now = store.get("zhiwen.theme", "");
  const next = THEMES[(THEMES.findIndex(([t]) => t === now) + 1) % THEMES.length][0];
  store.set("zhiwen.theme", next);
  applyTheme(next);
});

// -- boot -----------------------------------------------------------------------------------
async function boot() {
  applyTheme(store.get("zhiwen.theme", ""));
  initSourceDialog();
  initKeyDialog($("#key-button"));
  createAdminView();
  select(location.hash.slice(1) || "chat");
  const main = $("#main");
  main.dataset.busy = "true";
  try {
    const [config, kbs] = await Promise.all([api("/api/v1/ui-config"), api("/api/v1/kbs")]);
    app.config = config;
    app.kbs = kbs.kbs;
    input.maxLength = config.max_question_chars || 2000;
    $("#version").textContent = `v${config.version}`;
    $("#llm-state").textContent = config.llm_configured ? "已配置大模型" : "未配置大模型 · 摘录式回答";
  } catch (err) {
    $("#boot-error").replaceChildren(errorBox(err));
  }
  for (const v of Object.values(views)) v.init();
  main.dataset.busy = "false";
  document.body.dataset.ready = "true";
}

boot();
