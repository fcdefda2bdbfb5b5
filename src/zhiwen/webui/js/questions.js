// 提问记录: what people asked this KB (GET …/questions?status=&since=&until=&app=): the questions
// it could not answer, the answers rated 👎 with their reasons, or all; and the most asked
// questions, grouped when they say the same thing (GET …/questions/top?days=). 「设为 FAQ」 turns
// a question and a corrected answer into an FAQ entry (POST …/questions/{answer_id}/faq): the
// next identical or paraphrased question gets that answer word for word. Export as CSV / JSONL.

import { REASON_LABELS } from "./feedback.js";
import { el, emptyNode, errorBox, int, toast } from "./util.js";
import { appOptions, daysAgo, download, field, kbApi, kbPath, loadInto, query, when } from "./ownerkit.js";

const STATUSES = [
  ["unanswered", "未答上"],
  ["disliked", "点踩的回答"],
  ["all", "全部"],
];
const UNANSWERED = {
  refused: "拒答",
  not_answerable: "知识库中可能没有相关内容",
  timeout: "大模型超时",
  llm_error: "大模型调用失败",
  error: "大模型调用出错",
  busy: "大模型繁忙",
  breaker_open: "大模型暂停调用",
};
const TYPES = {
  faq: "FAQ",
  generated: "大模型生成",
  extractive: "摘录",
  refused: "拒答",
  table: "表格",
  tool: "工具",
};
const PAGE = 50;
const DEFAULT_DAYS = 30;

/** A listed question's record (the route may nest it under ``record``) and its ratings. */
function readItem(item) {
  const rec = { ...item, ...(item.record || {}) };
  const feedback = item.feedback || rec.feedback || [];
  return { rec, feedback };
}

function feedbackList(feedback) {
  const downs = feedback.filter((f) => f.rating === "down");
  const ups = feedback.filter((f) => f.rating === "up").length;
  if (!downs.length && !ups) return null;
  return el(
    "ul",
    { class: "feedback-list small" },
    ups ? el("li", {}, `👍 ${ups}`) : null,
    downs.map((f) =>
      el(
        "li",
        { "data-testid": "question-reason" },
        "👎 ",
        el("strong", {}, f.reason_label || REASON_LABELS[f.reason] || f.reason || "没用"),
        f.comment ? el("span", { class: "muted" }, `：${f.comment}`) : null,
      ),
    ),
  );
}

/** The 「设为 FAQ」 box: the question (editable) and the corrected answer. */
function faqBox(kb, rec, onDone, onCancel) {
  const question = el("input", { type: "text", "data-testid": "to-faq-question" });
  question.value = rec.standalone || rec.question || "";
  const answer = el("textarea", {
    rows: "5",
    required: true,
    placeholder: "写下正确的回答：以后同样或意思相同的问题将原样得到这个回答",
    "data-testid": "to-faq-answer",
  });
  const form = el(
    "form",
    { class: "card-form to-faq", "data-testid": "to-faq-form" },
    field("问题", question),
    field("正确的回答", answer),
    el(
      "div",
      { class: "row" },
      el("button", { type: "submit", class: "primary small", "data-testid": "to-faq-submit" }, "保存为 FAQ"),
      el("button", { type: "button", class: "ghost small", onclick: onCancel }, "取消"),
    ),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    form.querySelector(".error")?.remove();
    const body = { answer: answer.value.trim() };
    if (!body.answer) return form.append(errorBox(new Error("请填写正确的回答")));
    if (question.value.trim()) body.question = question.value.trim();
    try {
      const entry = await kbApi(kb, `/questions/${encodeURIComponent(rec.answer_id)}/faq`, { body });
      onDone(entry);
    } catch (err) {
      form.append(errorBox(err));
    }
  });
  return form;
}

export function createQuestionsPanel({ kb, app, goto }) {
  const status = el(
    "select",
    { "aria-label": "类别", "data-testid": "questions-status" },
    STATUSES.map(([v, l]) => el("option", { value: v }, l)),
  );
  const since = el("input", { type: "date", "data-testid": "questions-since" });
  since.value = daysAgo(DEFAULT_DAYS);
  const until = el("input", { type: "date", "data-testid": "questions-until" });
  const appSelect = el("select", { "data-testid": "questions-app" }, appOptions(app));
  const list = el("div", { class: "question-list", "data-testid": "question-list" });
  const top = el("div", { class: "top-list", "data-testid": "top-list" });
  const note = el("div", { "aria-live": "polite" });

  const appName = (name) => (name === "qa" ? "通用问答" : name ? app.appTitle(name) : "—");
  const filters = () => ({
    status: status.value,
    since: since.value,
    until: until.value,
    app: appSelect.value,
  });

  function questionRow({ rec, feedback }) {
    const reason = rec.unanswered_reason;
    const item = el(
      "article",
      { class: "question", "data-testid": "question", "data-answer-id": rec.answer_id },
      el(
        "header",
        { class: "chunk-head" },
        el("strong", { class: "q-text" }, rec.question),
        el("span", { class: "flag muted" }, TYPES[rec.answer_type] || rec.answer_type || "—"),
        reason
          ? el("span", { class: "flag warn" }, rec.unanswered_label || UNANSWERED[reason] || reason)
          : null,
        el("span", { class: "muted small" }, `${when(rec.at)} · ${appName(rec.app)}`),
      ),
      rec.standalone && rec.standalone !== rec.question
        ? el("p", { class: "muted small" }, `理解为：${rec.standalone}`)
        : null,
      feedbackList(feedback),
      el("p", { class: "muted small answer-id" }, `回答编号：${rec.answer_id}`),
    );
    const toFaq = el("button", { type: "button", class: "ghost small", "data-testid": "to-faq" }, "设为 FAQ");
    toFaq.addEventListener("click", () => {
      toFaq.disabled = true;
      const box = faqBox(
        kb,
        rec,
        (entry) => {
          box.replaceWith(
            el(
              "p",
              { class: "ok small", "data-testid": "to-faq-done" },
              `已设为 FAQ${entry && entry.question ? `：「${entry.question}」` : ""}。`,
              el("a", { href: "#", onclick: (e) => (e.preventDefault(), goto("faq")) }, "查看 FAQ"),
            ),
          );
          toast("已设为 FAQ：以后这个问题直接得到这个回答", "ok");
        },
        () => {
          box.remove();
          toFaq.disabled = false;
        },
      );
      item.append(box);
      box.querySelector("textarea").focus();
    });
    item.append(el("div", { class: "actions" }, toFaq));
    return item;
  }

  function topGroup(g) {
    const variants = (g.variants || []).filter((v) => v.question !== g.question);
    return el(
      "li",
      { "data-testid": "top-question" },
      el("strong", {}, g.question),
      el(
        "span",
        { class: "muted small" },
        ` ×${int(g.count)}${g.unanswered ? `（未答上 ${int(g.unanswered)}）` : ""}`,
      ),
      variants.length
        ? el("div", { class: "muted small" }, `也问：${variants.map((v) => v.question).join("；")}`)
        : null,
    );
  }

  function refresh() {
    const f = filters();
    loadInto(list, async () => {
      const got = await kbApi(kb, `/questions${query({ ...f, limit: PAGE })}`);
      const items = Array.isArray(got) ? got : got.items || [];
      const total = got.total ?? items.length;
      if (!items.length) return el("p", { class: "muted" }, "这段时间没有这类提问。");
      return [
        el(
          "p",
          { class: "muted small" },
          total > items.length ? `共 ${total} 条，显示最新 ${items.length} 条` : `共 ${total} 条`,
        ),
        ...items.map((x) => questionRow(readItem(x))),
      ];
    });
    const days = f.since
      ? Math.max(1, Math.round((Date.now() - new Date(f.since).getTime()) / 86_400_000) + 1)
      : DEFAULT_DAYS;
    loadInto(top, async () => {
      const got = await kbApi(kb, `/questions/top${query({ days, app: f.app })}`);
      const groups = Array.isArray(got) ? got : got.items || got.groups || [];
      if (!groups.length) return el("p", { class: "muted" }, "还没有提问。");
      return el("ol", { class: "top-questions" }, groups.slice(0, 20).map(topGroup));
    });
  }

  const form = el(
    "form",
    { class: "toolbar filters" },
    field("类别", status, "field inline"),
    field("从", since, "field inline"),
    field("到", until, "field inline"),
    field("应用", appSelect, "field inline"),
    el("button", { type: "submit", class: "ghost small", "data-testid": "questions-refresh" }, "查询"),
    ["csv", "jsonl"].map((fmt) =>
      el(
        "button",
        {
          type: "button",
          class: "ghost small",
          onclick: () => {
            emptyNode(note);
            const f = filters();
            download(
              kbPath(
                kb,
                `/questions/export${query({ format: fmt, since: f.since, until: f.until, app: f.app })}`,
              ),
              `${kb}-questions.${fmt}`,
            ).catch((err) => note.append(errorBox(err)));
          },
        },
        `导出 ${fmt.toUpperCase()}`,
      ),
    ),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    refresh();
  });
  for (const control of [status, appSelect]) control.addEventListener("change", refresh);
  refresh();
  return el(
    "section",
    { class: "owner-panel questions-grid", "data-testid": "owner-questions" },
    form,
    note,
    el("div", { class: "questions-main" }, el("h3", {}, "提问"), list),
    el("aside", { class: "questions-top" }, el("h3", {}, "最常问"), top),
  );
}
