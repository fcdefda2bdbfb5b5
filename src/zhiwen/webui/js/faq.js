// FAQ: a KB's question–answer pairs, answered word for word (no LLM) when a question matches an
// entry above the KB's threshold. List and search (GET …/faq?q=), add (POST), edit (PATCH),
// delete, import a CSV / XLSX / JSONL file (columns 问题, 答案, optional 相似问题 one a line, 分类;
// all or nothing: the rows in error are listed), export, and the matching threshold.

import { deleteButton, el, emptyNode, errorBox, int, score, toast } from "./util.js";
import { download, field, kbApi, kbPath, lines, loadInto, query, sendFile } from "./ownerkit.js";

const PAGE = 50;

/** The rows an import refused ({row, column, message}) as a table. */
export function rowErrors(err) {
  const rows = (err && err.data && Array.isArray(err.data.errors) && err.data.errors) || [];
  if (!rows.length) return null;
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      { class: "mini row-errors", "data-testid": "import-errors" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ["行", "列", "问题"].map((h) => el("th", { scope: "col" }, h)),
        ),
      ),
      el(
        "tbody",
        {},
        rows
          .slice(0, 100)
          .map((r) =>
            el(
              "tr",
              {},
              el("td", {}, r.row ?? "—"),
              el("td", {}, r.column ?? "—"),
              el("td", {}, r.reason || r.message || ""),
            ),
          ),
      ),
    ),
    rows.length > 100 ? el("p", { class: "small muted" }, `共 ${rows.length} 处错误，显示前 100 处`) : null,
  );
}

/** The form of one entry (new: ``entry`` null); ``onSave(body)`` gets {question, answer, similar, category}. */
export function entryForm(entry, onSave, onCancel) {
  const question = el("input", { type: "text", required: true, "data-testid": "faq-question-input" });
  const answer = el("textarea", { rows: "5", required: true, "data-testid": "faq-answer-input" });
  const similar = el("textarea", { rows: "3", "data-testid": "faq-similar-input" });
  const category = el("input", { type: "text" });
  if (entry) {
    question.value = entry.question || "";
    answer.value = entry.answer || "";
    similar.value = (entry.similar || []).join("\n");
    category.value = entry.category || "";
  }
  const form = el(
    "form",
    { class: "card-form faq-form", "data-testid": "faq-form" },
    el("h3", {}, entry ? "编辑 FAQ" : "新增 FAQ"),
    field("问题", question),
    field("答案（原样返回给提问者）", answer),
    field("相似问题（每行一个）", similar),
    field("分类（可选）", category),
    el(
      "div",
      { class: "row" },
      el("button", { type: "submit", class: "primary small", "data-testid": "faq-save" }, "保存"),
      el("button", { type: "button", class: "ghost small", onclick: onCancel }, "取消"),
    ),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    form.querySelector(".error")?.remove();
    const body = { question: question.value.trim(), answer: answer.value.trim() };
    if (!body.question || !body.answer) return form.append(errorBox(new Error("问题和答案都不能为空")));
    body.similar = lines(similar.value);
    body.category = category.value.trim();
    try {
      await onSave(body);
    } catch (err) {
      form.append(errorBox(err));
    }
  });
  return form;
}

export function createFaqPanel({ kb }) {
  const search = el("input", {
    type: "search",
    placeholder: "搜索问题或答案",
    "aria-label": "搜索 FAQ",
    "data-testid": "faq-search",
  });
  const list = el("div", { class: "faq-list", "data-testid": "faq-list" });
  const formBox = el("div", { class: "add-box" });
  const importBox = el("div", { class: "import-box", "aria-live": "polite" });
  const threshold = el("input", {
    type: "number",
    min: "0",
    max: "1",
    step: "0.01",
    "aria-label": "匹配阈值",
    "data-testid": "faq-threshold",
  });

  function entryCard(e) {
    const card = el(
      "article",
      { class: "faq-entry", "data-testid": "faq-entry", "data-entry-id": e.id },
      el(
        "header",
        { class: "chunk-head" },
        el("strong", { class: "faq-q" }, e.question),
        e.category ? el("span", { class: "flag muted" }, e.category) : null,
        e.enabled === false ? el("span", { class: "flag bad" }, "已停用") : null,
        typeof e.hits === "number" ? el("span", { class: "muted small" }, `命中 ${int(e.hits)} 次`) : null,
      ),
      el("div", { class: "chunk-text faq-a" }, e.answer),
      e.similar && e.similar.length
        ? el(
            "p",
            { class: "chips" },
            el("span", { class: "muted small" }, "相似问题："),
            e.similar.map((s) => el("span", { class: "chip static" }, s)),
          )
        : null,
    );
    const edit = el("button", { type: "button", class: "ghost small", "data-testid": "faq-edit" }, "编辑");
    edit.addEventListener("click", () => {
      const form = entryForm(
        e,
        async (body) => {
          await kbApi(kb, `/faq/${encodeURIComponent(e.id)}`, { method: "PATCH", body });
          toast("已保存", "ok");
          await refresh();
        },
        () => form.replaceWith(card),
      );
      card.replaceWith(form);
    });
    const drop = deleteButton("删除", async () => {
      try {
        await kbApi(kb, `/faq/${encodeURIComponent(e.id)}`, { method: "DELETE" });
        toast("已删除 FAQ", "ok");
        await refresh();
      } catch (err) {
        card.append(errorBox(err));
      }
    });
    drop.dataset.testid = "faq-delete";
    card.append(el("div", { class: "actions" }, edit, drop));
    return card;
  }

  function refresh() {
    return loadInto(list, async () => {
      const got = await kbApi(kb, `/faq${query({ q: search.value.trim(), limit: PAGE })}`);
      if (typeof got.threshold === "number" && document.activeElement !== threshold)
        threshold.value = String(got.threshold);
      const items = got.items || [];
      const total = got.total ?? items.length;
      if (!items.length)
        return el(
          "p",
          { class: "muted" },
          search.value.trim() ? "没有匹配的 FAQ。" : "还没有 FAQ：新增一条，或导入文件。",
        );
      return [
        el(
          "p",
          { class: "muted small" },
          total > items.length ? `共 ${total} 条，显示 ${items.length} 条` : `共 ${total} 条`,
        ),
        ...items.map(entryCard),
      ];
    });
  }

  const add = el("button", { type: "button", class: "primary small", "data-testid": "faq-add" }, "新增 FAQ");
  add.addEventListener("click", () => {
    formBox.replaceChildren(
      entryForm(
        null,
        async (body) => {
          await kbApi(kb, "/faq", { body });
          toast("已新增 FAQ", "ok");
          emptyNode(formBox);
          await refresh();
        },
        () => emptyNode(formBox),
      ),
    );
  });

  const file = el("input", {
    type: "file",
    accept: ".csv,.xlsx,.jsonl,.json",
    "data-testid": "faq-import-file",
  });
  const importForm = el(
    "form",
    { class: "row import-form" },
    el(
      "label",
      { class: "file-pick" },
      file,
      el("span", { class: "file-btn" }, "选择文件"),
      el("span", { class: "file-names" }, "CSV / XLSX / JSONL"),
    ),
    el("button", { type: "submit", class: "ghost small", "data-testid": "faq-import" }, "导入"),
  );
  file.addEventListener("change", () => {
    importForm.querySelector(".file-names").textContent = file.files[0]
      ? file.files[0].name
      : "CSV / XLSX / JSONL";
  });
  importForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    emptyNode(importBox);
    if (!file.files[0]) return importBox.append(errorBox(new Error("请选择文件")));
    try {
      const got = await sendFile(kbPath(kb, "/faq/import"), file.files[0]);
      const counts = [
        ["新增", got && got.added],
        ["更新", got && got.updated],
        ["未变", got && got.unchanged],
      ].filter(([, n]) => typeof n === "number");
      const said = counts.map(([k, n]) => `${k} ${n} 条`).join("，");
      importBox.append(
        el("p", { class: "ok", "data-testid": "import-ok" }, `导入成功${said ? `：${said}` : ""}`),
      );
      importForm.reset();
      await refresh();
    } catch (err) {
      importBox.append(errorBox(err, "（文件没有导入任何一行）"), rowErrors(err));
    }
  });

  const exportButtons = ["csv", "jsonl"].map((fmt) =>
    el(
      "button",
      {
        type: "button",
        class: "ghost small",
        "data-testid": `faq-export-${fmt}`,
        onclick: () =>
          download(kbPath(kb, `/faq/export?format=${fmt}`), `${kb}-faq.${fmt}`).catch((err) =>
            importBox.replaceChildren(errorBox(err)),
          ),
      },
      `导出 ${fmt.toUpperCase()}`,
    ),
  );

  const thresholdForm = el(
    "form",
    { class: "row threshold-form" },
    field("匹配阈值（0–1，越高越严格）", threshold, "field inline"),
    el("button", { type: "submit", class: "ghost small", "data-testid": "faq-threshold-save" }, "保存阈值"),
  );
  thresholdForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    thresholdForm.querySelector(".error")?.remove();
    const value = Number(threshold.value);
    if (!(value > 0 && value <= 1)) return thresholdForm.append(errorBox(new Error("阈值应在 0 到 1 之间")));
    try {
      const got = await kbApi(kb, "/faq/settings", { method: "PUT", body: { threshold: value } });
      toast(`阈值已设为 ${score(got && typeof got.threshold === "number" ? got.threshold : value)}`, "ok");
    } catch (err) {
      thresholdForm.append(errorBox(err));
    }
  });

  const searchForm = el(
    "form",
    { class: "toolbar", role: "search" },
    search,
    el("button", { type: "submit", class: "ghost small" }, "搜索"),
    add,
  );
  searchForm.addEventListener("submit", (e) => {
    e.preventDefault();
    refresh();
  });
  refresh();
  return el(
    "section",
    { class: "owner-panel", "data-testid": "owner-faq" },
    el(
      "p",
      { class: "muted small" },
      "问题与 FAQ 足够相似（超过阈值）时，直接返回 FAQ 的答案，不调用大模型；接近但未达阈值时，在回答下提示「您是不是想问」。",
    ),
    searchForm,
    formBox,
    el("div", { class: "toolbar" }, importForm, ...exportButtons),
    importBox,
    thresholdForm,
    list,
  );
}
