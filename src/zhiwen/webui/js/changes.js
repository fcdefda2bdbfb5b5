// 修改记录: every change an owner made to the KB (chunks, FAQ, dictionary, synonyms), newest
// first, with who (the key's fingerprint) and when (GET …/changes); 撤销 undoes one (POST
// …/changes/undo {change_id}) or the last one.

import { el, errorBox, miniTable, toast } from "./util.js";
import { kbApi, loadInto, query, when } from "./ownerkit.js";

const ACTIONS = {
  update: "修改片段",
  edit: "修改片段",
  enable: "启用片段",
  disable: "停用片段",
  delete: "删除片段",
  add: "添加片段",
  add_many: "批量添加",
  faq: "FAQ",
  faq_add: "新增 FAQ",
  faq_update: "修改 FAQ",
  faq_delete: "删除 FAQ",
  faq_import: "导入 FAQ",
  words: "修改词典",
  dictionary: "修改词典",
  groups: "修改同义词",
  synonyms: "修改同义词",
  undo: "撤销",
};
const LIMIT = 100;

/** The list a route answered: ``{items}``, ``{changes}`` or a bare list. */
const itemsOf = (got) => (Array.isArray(got) ? got : got.items || got.changes || []);

export function createChangesPanel({ kb }) {
  const list = el("div", { class: "changes", "data-testid": "change-list" });
  const note = el("div", { "aria-live": "polite" });

  async function undo(changeId = null) {
    note.replaceChildren();
    try {
      await kbApi(kb, "/changes/undo", { body: changeId === null ? {} : { change_id: changeId } });
      toast("已撤销", "ok");
      await refresh();
    } catch (err) {
      note.append(errorBox(err));
    }
  }

  function row(c) {
    const undoBtn = c.undone
      ? el("span", { class: "flag muted" }, "已撤销")
      : el(
          "button",
          { type: "button", class: "ghost small", "data-testid": "change-undo", onclick: () => undo(c.id) },
          "撤销",
        );
    return el(
      "tr",
      { "data-testid": "change", "data-change-id": c.id, "data-undone": String(Boolean(c.undone)) },
      el("td", {}, when(c.at)),
      el("td", {}, c.label || ACTIONS[c.action] || c.action || "—"),
      el("td", {}, el("code", { class: "small" }, c.target || "—")),
      el("td", { class: "muted small" }, c.actor || "—"),
      el("td", {}, undoBtn),
    );
  }

  function refresh() {
    return loadInto(list, async () => {
      const items = itemsOf(await kbApi(kb, `/changes${query({ limit: LIMIT })}`));
      if (!items.length) return el("p", { class: "muted" }, "还没有修改记录。");
      return miniTable(["时间", "操作", "对象", "操作者", ""], items.map(row));
    });
  }

  refresh();
  return el(
    "section",
    { class: "owner-panel", "data-testid": "owner-changes" },
    el(
      "div",
      { class: "toolbar" },
      el(
        "button",
        { type: "button", class: "ghost small", "data-testid": "undo-last", onclick: () => undo() },
        "撤销上一次修改",
      ),
      el("button", { type: "button", class: "ghost small", onclick: refresh }, "刷新"),
    ),
    note,
    list,
  );
}
