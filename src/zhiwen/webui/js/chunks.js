// 文档与片段: a KB's documents and, for the one picked, its chunks in order
// (GET …/documents/{doc}/chunks), or the chunks a search finds (GET …/chunks?q=). Each chunk shows
// its state (原始 / 已编辑 / 手动添加 / 「原文已更新」: the source changed under an edit), its hit
// count, questions and keywords; the owner edits its text, questions and keywords (PATCH),
// disables or enables it, deletes it, or adds one by hand (POST). The server re-indexes at once.

import { deleteButton, el, emptyNode, errorBox, int, toast } from "./util.js";
import { field, kbApi, lines, loadInto, query, when } from "./ownerkit.js";

const STATES = {
  original: ["原始", "muted"],
  edited: ["已编辑", "ok"],
  added: ["手动添加", "ok"],
  source_changed: ["原文已更新", "warn"],
};
const PAGE = 50;

function chips(items, cls, label) {
  if (!items || !items.length) return null;
  return el(
    "p",
    { class: `chips ${cls}` },
    el("span", { class: "muted small" }, `${label}：`),
    items.map((x) => el("span", { class: "chip static" }, x)),
  );
}

function stateFlags(c) {
  const [label, tone] = STATES[c.state] || [c.state || "原始", "muted"];
  const flags = [el("span", { class: `flag ${tone}`, "data-testid": "chunk-state" }, label)];
  if (c.review && c.state !== "source_changed")
    flags.push(el("span", { class: "flag warn", "data-testid": "chunk-review" }, "原文已更新"));
  if (!c.enabled) flags.push(el("span", { class: "flag bad", "data-testid": "chunk-disabled" }, "已停用"));
  flags.push(el("span", { class: "muted small" }, `命中 ${int(c.hits || 0)} 次`));
  if (c.updated_at)
    flags.push(el("span", { class: "muted small" }, `${when(c.updated_at)} ${c.updated_by || ""}`));
  return flags;
}

/** The editor of one chunk: text, questions and keywords (one a line); resolves the PATCH body. */
function chunkEditor(c, onSave, onCancel) {
  const text = el("textarea", { rows: "8", "data-testid": "chunk-text-input", "aria-label": "片段内容" });
  text.value = c.text || "";
  const questions = el("textarea", { rows: "3", "data-testid": "chunk-questions-input" });
  questions.value = (c.questions || []).join("\n");
  const keywords = el("textarea", { rows: "2", "data-testid": "chunk-keywords-input" });
  keywords.value = (c.keywords || []).join("\n");
  const form = el(
    "form",
    { class: "chunk-editor" },
    text,
    field("问题（每行一个：用户可能这样问，命中即找到本片段）", questions),
    field("关键词（每行一个：检索时加权）", keywords),
    el(
      "div",
      { class: "row" },
      el("button", { type: "submit", class: "primary small", "data-testid": "chunk-save" }, "保存"),
      el("button", { type: "button", class: "ghost small", onclick: onCancel }, "取消"),
    ),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const patch = {};
    if (text.value.trim() !== (c.text || "").trim()) patch.text = text.value.trim();
    const q = lines(questions.value);
    if (q.join("\n") !== (c.questions || []).join("\n")) patch.questions = q;
    const k = lines(keywords.value);
    if (k.join("\n") !== (c.keywords || []).join("\n")) patch.keywords = k;
    onSave(patch);
  });
  return form;
}

export function createChunksPanel({ kb }) {
  const docSelect = el("select", { "data-testid": "doc-select", "aria-label": "文档" });
  const search = el("input", {
    type: "search",
    placeholder: "搜索片段内容或关键词",
    "aria-label": "搜索片段",
    "data-testid": "chunk-search",
  });
  const list = el("div", { class: "chunk-list", "data-testid": "chunk-list" });
  const addBox = el("div", { class: "add-box" });
  let reload = () => {};

  async function patchChunk(c, patch, box) {
    if (!Object.keys(patch).length) return reload();
    try {
      await kbApi(kb, `/chunks/${encodeURIComponent(c.id)}`, { method: "PATCH", body: patch });
      toast("已保存，检索立即生效", "ok");
      await reload();
    } catch (err) {
      box.append(errorBox(err));
    }
  }

  function chunkCard(c, n) {
    const body = el("div", { class: "chunk-text" }, c.text || "");
    const card = el(
      "article",
      {
        class: "chunk",
        "data-testid": "chunk",
        "data-chunk-id": c.id,
        "data-enabled": String(Boolean(c.enabled)),
      },
      el(
        "header",
        { class: "chunk-head" },
        el("strong", {}, n ? `#${n}` : c.title || c.doc_id),
        el("code", { class: "small muted" }, c.id),
        stateFlags(c),
      ),
      body,
      c.source_text && c.source_text !== c.text
        ? el(
            "details",
            { class: "source-text" },
            el(
              "summary",
              { class: "small muted" },
              c.review ? "导入的原文（已更新，请复核修改）" : "导入时的原文",
            ),
            el("div", { class: "chunk-text muted" }, c.source_text),
          )
        : null,
      chips(c.questions, "questions", "问题"),
      chips(c.keywords, "keywords", "关键词"),
    );
    const edit = el("button", { type: "button", class: "ghost small", "data-testid": "chunk-edit" }, "编辑");
    const toggle = el(
      "button",
      { type: "button", class: "ghost small", "data-testid": "chunk-toggle" },
      c.enabled ? "停用" : "启用",
    );
    const drop = deleteButton("删除", async () => {
      try {
        await kbApi(kb, `/chunks/${encodeURIComponent(c.id)}`, { method: "DELETE" });
        toast("已删除片段（可在修改记录中撤销）", "ok");
        await reload();
      } catch (err) {
        card.append(errorBox(err));
      }
    });
    drop.dataset.testid = "chunk-delete";
    edit.addEventListener("click", () => {
      const editor = chunkEditor(
        c,
        (patch) => patchChunk(c, patch, card),
        () => {
          editor.replaceWith(body);
          edit.disabled = false;
        },
      );
      body.replaceWith(editor);
      edit.disabled = true;
      editor.querySelector("textarea").focus();
    });
    toggle.addEventListener("click", () => patchChunk(c, { enabled: !c.enabled }, card));
    card.append(el("div", { class: "actions" }, edit, toggle, drop));
    return card;
  }

  function render(items, total, numbered) {
    if (!items.length) return el("p", { class: "muted" }, "没有片段。");
    return [
      el(
        "p",
        { class: "muted small" },
        total > items.length ? `共 ${total} 段，显示 ${items.length} 段` : `共 ${total} 段`,
      ),
      ...items.map((c, i) => chunkCard(c, numbered ? i + 1 : 0)),
    ];
  }

  async function showDoc() {
    const doc = docSelect.value;
    reload = showDoc;
    if (!doc)
      return loadInto(list, async () => el("p", { class: "muted" }, "选择文档查看它的片段，或搜索片段。"));
    return loadInto(list, async () => {
      const got = await kbApi(kb, `/documents/${encodeURIComponent(doc)}/chunks`);
      return render(got.items, got.total ?? got.items.length, true);
    });
  }

  async function runSearch() {
    const q = search.value.trim();
    if (!q) return showDoc();
    reload = runSearch;
    return loadInto(list, async () => {
      const got = await kbApi(kb, `/chunks${query({ q, limit: PAGE })}`);
      return render(got.items, got.total ?? got.items.length, false);
    });
  }

  function addForm() {
    const doc = el("input", { type: "text", placeholder: "留空：放在 manual 文档" });
    doc.value = docSelect.value || "";
    const title = el("input", { type: "text" });
    const text = el("textarea", { rows: "5", required: true, "data-testid": "chunk-add-text" });
    const questions = el("textarea", { rows: "2" });
    const keywords = el("textarea", { rows: "2" });
    const form = el(
      "form",
      { class: "card-form", "data-testid": "chunk-add-form" },
      el("h3", {}, "手动添加片段"),
      el("div", { class: "grid-fields" }, field("文档编号", doc), field("标题", title)),
      field("内容", text),
      field("问题（每行一个）", questions),
      field("关键词（每行一个）", keywords),
      el(
        "div",
        { class: "row" },
        el("button", { type: "submit", class: "primary small", "data-testid": "chunk-add-submit" }, "添加"),
        el("button", { type: "button", class: "ghost small", onclick: () => emptyNode(addBox) }, "取消"),
      ),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      form.querySelector(".error")?.remove();
      const body = { text: text.value.trim() };
      if (!body.text) return form.append(errorBox(new Error("请填写片段内容")));
      if (doc.value.trim()) body.doc_id = doc.value.trim();
      if (title.value.trim()) body.title = title.value.trim();
      if (lines(questions.value).length) body.questions = lines(questions.value);
      if (lines(keywords.value).length) body.keywords = lines(keywords.value);
      try {
        const made = await kbApi(kb, "/chunks", { method: "POST", body });
        toast("已添加片段", "ok");
        emptyNode(addBox);
        search.value = ""; // show the new chunk where it went: its document
        await loadDocs(made && made.doc_id);
      } catch (err) {
        form.append(errorBox(err));
      }
    });
    return form;
  }

  async function loadDocs(pick = null) {
    const keep = pick || docSelect.value;
    try {
      const got = await kbApi(kb, "/documents");
      const docs = got.documents || [];
      docSelect.replaceChildren(
        el("option", { value: "" }, docs.length ? "（选择文档）" : "（没有文档）"),
        ...docs.map((d) =>
          el(
            "option",
            { value: d.doc_id },
            typeof d.chunks === "number" ? `${d.title || d.doc_id}（${d.chunks} 段）` : d.title || d.doc_id,
          ),
        ),
      );
      if (keep && docs.some((d) => d.doc_id === keep)) docSelect.value = keep;
      else if (docs.length) docSelect.value = docs[0].doc_id;
      await (search.value.trim() ? runSearch() : showDoc());
    } catch (err) {
      list.replaceChildren(errorBox(err));
    }
  }

  docSelect.addEventListener("change", () => {
    search.value = "";
    showDoc();
  });
  const searchForm = el(
    "form",
    { class: "toolbar", role: "search" },
    field("文档", docSelect, "field inline"),
    search,
    el("button", { type: "submit", class: "ghost small" }, "搜索"),
    el(
      "button",
      {
        type: "button",
        class: "ghost small",
        "data-testid": "chunk-add",
        onclick: () => addBox.replaceChildren(addForm()),
      },
      "手动添加片段",
    ),
  );
  searchForm.addEventListener("submit", (e) => {
    e.preventDefault();
    runSearch();
  });
  loadDocs();
  return el("section", { class: "owner-panel", "data-testid": "owner-chunks" }, searchForm, addBox, list);
}
