// A tab whose app is not set up says so before the first question, with the command that sets
// it up: ui-config's ``setup_command`` (the server's one source: ``zhiwen policy setup
// ../shared/data``). The server's own 404 (3004) says the same in an answer, with the command in
// ``data.extra.setup_command``.
//
// Example:
//   showSetup(section, app, ["policy"]);   // a notice above the thread while policy_* are missing

import { copyText, el, toast } from "./util.js";

/** The required KBs of app ``name`` that are not built yet ([] when set up or not installed). */
export function missingKbs(app, name) {
  const a = app.config.apps.find((x) => x.name === name);
  if (!a) return [];
  const have = new Set(app.kbs.map((k) => k.name));
  return (a.kbs || []).filter((k) => k.required !== false && !have.has(k.name)).map((k) => k.name);
}

/** The command as code, with a copy button. */
export function commandLine(command) {
  const copy = el("button", { type: "button", class: "ghost small", "aria-label": `复制命令 ${command}` }, "复制");
  copy.addEventListener("click", async () => toast((await copyText(command)) ? "已复制命令" : "复制失败，请手动选择"));
  return el("span", { class: "command" }, el("code", {}, command), copy);
}

/** One line for app ``name`` while its KBs are missing (null when it is set up). */
function appLine(app, name) {
  const missing = missingKbs(app, name);
  const a = app.config.apps.find((x) => x.name === name);
  if (!missing.length || !a || !a.setup_command) return null;
  return el(
    "p",
    { "data-app": name },
    el("strong", {}, `${a.title || name}尚未建立`),
    "：请先在终端运行 ",
    commandLine(a.setup_command),
    el("span", { class: "muted" }, `（缺少知识库 ${missing.join("、")}；建好后刷新本页）`),
  );
}

/** The notice for the apps ``names`` (null: all set up). ``extra`` lines go after them. */
export function setupNotice(app, names, extra = []) {
  const lines = [...names.map((n) => appLine(app, n)), ...extra].filter(Boolean);
  if (!lines.length) return null;
  return el("div", { class: "setup-hint", role: "status", "data-testid": "setup-hint" }, lines);
}

/** Show (or clear) the notice in ``section``, just above its thread. */
export function showSetup(section, app, names, extra = []) {
  section.querySelector(":scope > .setup-hint")?.remove();
  const notice = setupNotice(app, names, extra);
  if (notice) section.querySelector(".thread").before(notice);
  return notice;
}
