// 管理知识库: the owner's area of one KB (#owner/<kb>/<panel>, opened from the 知识库 list). Its
// panels — 文档与片段, FAQ, 词典 / 同义词, 修改记录, 提问记录, 统计, 同步与备份 — each live in a module of
// their own and call the owner routes (INTERFACES.md), which need a key with write access to the
// KB: a refusal says so in the panel. Every change is recorded by the server and can be undone
// under 修改记录.

import { createChangesPanel } from "./changes.js";
import { createChunksPanel } from "./chunks.js";
import { createFaqPanel } from "./faq.js";
import { createQuestionsPanel } from "./questions.js";
import { createSafetyPanel } from "./safety.js";
import { createStatsPanel } from "./stats.js";
import { createWordsPanel } from "./words.js";
import { $, el } from "./util.js";

const PANELS = [
  ["chunks", "文档与片段", createChunksPanel],
  ["faq", "FAQ", createFaqPanel],
  ["words", "词典 / 同义词", createWordsPanel],
  ["changes", "修改记录", createChangesPanel],
  ["questions", "提问记录", createQuestionsPanel],
  ["stats", "统计", createStatsPanel],
  ["safety", "同步与备份", createSafetyPanel],
];

/** The hash that opens ``kb``'s owner area at ``panel``. */
export const ownerHash = (kb, panel = "chunks") => `#owner/${encodeURIComponent(kb)}/${panel}`;

export function createOwnerView(app) {
  const title = $("#owner-title");
  const nav = $("#owner-tabs");
  const body = $("#owner-body");
  let shown = { kb: null, panel: null };

  function tabs(kb, panel) {
    nav.replaceChildren(
      ...PANELS.map(([name, label]) =>
        el(
          "a",
          {
            href: ownerHash(kb, name),
            class: "subtab",
            "data-testid": `owner-tab-${name}`,
            "aria-current": name === panel ? "page" : null,
          },
          label,
        ),
      ),
    );
  }

  /** Show ``panel`` of ``kb`` (a fresh panel each time: it loads what the server has now). */
  function open(kb, panel) {
    if (!kb) {
      location.hash = "#kbs";
      return;
    }
    const entry = PANELS.find(([name]) => name === panel) || PANELS[0];
    if (shown.kb === kb && shown.panel === entry[0] && body.firstChild) return;
    shown = { kb, panel: entry[0] };
    title.textContent = `管理知识库：${kb}`;
    tabs(kb, entry[0]);
    const ctx = { kb, app, goto: (name) => (location.hash = ownerHash(kb, name)) };
    body.replaceChildren(entry[2](ctx));
    body.dataset.panel = entry[0];
  }

  return {
    name: "owner",
    tab: "kbs", // the 知识库 tab stays selected
    placeholder: "",
    init() {},
    open,
    /** Forget the panel shown, so the next visit loads it again. */
    leave() {
      shown = { kb: null, panel: null };
    },
  };
}
