// Citations: a numbered list under an answer (each item data-testid="source") and a dialog
// that shows the cited chunk. QA citations name a document, not a chunk, and may carry no
// text; then the dialog asks /knowledge-base/search for that document's chunks that best
// match the question (filter on its "source" metadata), so the user still sees the passage.

import { $, api, el, emptyNode, errorBox, plainMarks, score } from "./util.js";

const META_LABELS = {
  source: "文件",
  section: "章节",
  page: "页码",
  law: "法规",
  article: "条款",
  chapter: "章",
  category: "分类",
  difficulty: "难度",
  city: "城市",
  end_date: "截止日期",
  policies_zh: "政策类型",
  days: "免签天数",
  last_check: "核对日期",
};

export function sourceLabel(s) {
  return plainMarks(s.label || (s.title ? `《${s.title}》` : s.id));
}

function metaLine(meta) {
  const bits = [];
  for (const [k, label] of Object.entries(META_LABELS)) {
    const v = meta && meta[k];
    if (v === null || v === undefined || v === "" || typeof v === "object") continue;
    bits.push(el("span", { class: "chip" }, `${label}：${v}`));
  }
  return bits.length ? el("div", { class: "chips" }, bits) : null;
}

async function chunksOf(source, question) {
  if (!source.kb) return [];
  const query = question || source.title || source.id;
  const filters = source.metadata && source.metadata.source ? { source: source.metadata.source } : undefined;
  const data = await api("/knowledge-base/search", { body: { kb: source.kb, query, top_k: 3, filters } });
  const own = data.results.filter((r) => !filters || r.doc_id === source.id || r.chunk_id === source.id);
  return own.length ? own : data.results;
}

/** Show one citation in the source dialog (fetching its chunks when it carries no text). */
export async function openSource(source, { question = "", index = null } = {}) {
  const dialog = $("#source-dialog");
  const body = emptyNode($("#source-dialog-body"));
  $("#source-dialog-title").textContent = `${index ? `[${index}] ` : ""}${sourceLabel(source)}`;
  body.append(
    el(
      "p",
      { class: "muted" },
      [
        source.kb && `知识库 ${source.kb}`,
        source.id && `ID ${source.id}`,
        typeof source.score === "number" && `得分 ${score(source.score)}`,
      ]
        .filter(Boolean)
        .join(" · "),
    ),
    metaLine(source.metadata),
  );
  if (!dialog.open) dialog.showModal();
  if (source.text) {
    body.append(el("pre", { class: "chunk-text" }, plainMarks(source.text)));
    return;
  }
  const holder = el("div", { class: "chunk-loading", "data-busy": "true" }, "正在读取原文……");
  body.append(holder);
  try {
    const chunks = await chunksOf(source, question);
    holder.remove();
    if (!chunks.length) body.append(el("p", { class: "muted" }, "没有找到这段来源的原文。"));
    for (const c of chunks) {
      body.append(
        el("h4", {}, c.title || c.doc_id, el("span", { class: "muted" }, ` · ${c.chunk_id}`)),
        el("pre", { class: "chunk-text" }, c.text),
      );
    }
  } catch (err) {
    holder.remove();
    body.append(errorBox(err));
  }
}

/**
 * The numbered source list. ``decorate(source, li)`` may add marks (e.g. 已到期);
 * ``numbers`` numbers the items (policy groups keep the answer's numbering); items past
 * ``limit`` are folded behind a 展开 button.
 */
export function sourceList(sources, { question = "", decorate = null, numbers = null, limit = 6 } = {}) {
  const ol = el("ol", { class: "sources" });
  sources.forEach((s, k) => {
    const n = numbers ? numbers[k] : k + 1;
    const btn = el(
      "button",
      {
        type: "button",
        class: "source",
        "data-testid": "source",
        "aria-label": `查看来源 ${n}：${sourceLabel(s)}`,
      },
      el("span", { class: "source-n" }, String(n)),
      el("span", { class: "source-title" }, sourceLabel(s)),
      el(
        "span",
        { class: "source-meta" },
        [
          s.kb,
          typeof s.score === "number" ? `得分 ${score(s.score)}` : null,
          typeof s.rerank_score === "number" ? `重排 ${score(s.rerank_score)}` : null,
        ]
          .filter(Boolean)
          .join(" · "),
      ),
    );
    btn.addEventListener("click", () => openSource(s, { question, index: n }));
    const li = el("li", { value: n, hidden: k >= limit }, btn);
    if (decorate) decorate(s, btn);
    ol.append(li);
  });
  if (sources.length <= limit) return ol;
  const more = el(
    "button",
    { type: "button", class: "ghost small more" },
    `展开其余 ${sources.length - limit} 条`,
  );
  more.addEventListener("click", () => {
    for (const li of ol.children) li.hidden = false;
    more.remove();
  });
  return el("div", { class: "sources-wrap" }, ol, more);
}

export function initSourceDialog() {
  const dialog = $("#source-dialog");
  $("#source-dialog-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (e) => {
    if (e.target === dialog) dialog.close(); // a click on the backdrop
  });
}
