// What every answer carries besides its text (the answer path's contract, INTERFACES.md): its id
// (shown small, for 👍/👎 and the owner's 提问记录), ``answer_type`` with the matched FAQ question
// (an 「FAQ」 badge: the answer is that entry's, word for word), 「您是不是想问：」 near-miss FAQ
// questions that ask themselves when clicked, and a result table when the answer carries one
// (``data.table``: zhiwen.tables.render.payload). Everything is built as DOM nodes with
// textContent: nothing from an answer is ever parsed as HTML.

import { feedbackBar } from "./feedback.js";
import { el, miniTable, num, score } from "./util.js";

const MAX_SUGGESTIONS = 5;

/**
 * The answer fields of an SSE ``done`` event or a REST answer's data (app fields may sit at the
 * top level, as ``done`` merges ``Answer.data``, or under ``data``).
 */
export function answerFields(source) {
  const s = source || {};
  const data = s.data && typeof s.data === "object" ? s.data : {};
  const faq = s.faq || data.faq || null;
  const suggestions = s.suggestions || data.suggestions || [];
  return {
    answer_id: typeof s.answer_id === "string" ? s.answer_id : null,
    answer_type: s.answer_type || data.answer_type || null,
    faq: faq && typeof faq === "object" && faq.question ? faq : null,
    suggestions: Array.isArray(suggestions) ? suggestions.filter((x) => typeof x === "string" && x) : [],
    table: tableOf(s.table) || tableOf(data.table),
  };
}

function tableOf(t) {
  return t && typeof t === "object" && Array.isArray(t.columns) && Array.isArray(t.rows) ? t : null;
}

function cellText(v) {
  if (v === null || v === undefined || v === "") return "—";
  if (typeof v === "number") return num(v);
  return String(v);
}

/**
 * A table answer's payload ({title, source, columns, types, rows, total_rows, highlight}; a SQL
 * answer adds ``sql`` and, when it fell back to a cell, ``fallback_reason``) as a scrollable
 * <table> (data-testid="answer-table"); the cells the answer is about are marked.
 */
export function answerTable(t) {
  const marked = new Set((t.highlight || []).map((h) => `${h[0]}:${h[1]}`));
  const types = t.types || [];
  const numeric = (j) => ["int", "float"].includes(types[j]);
  const caption = [t.title, t.source && t.source !== t.title ? `来源：${t.source}` : ""].filter(Boolean);
  const shown = t.rows.length;
  const total = typeof t.total_rows === "number" ? t.total_rows : shown;
  return el(
    "figure",
    { class: "answer-table", "data-testid": "answer-table" },
    caption.length ? el("figcaption", { class: "small muted" }, caption.join(" · ")) : null,
    miniTable(
      t.columns,
      t.rows.map((row, i) =>
        el(
          "tr",
          {},
          (Array.isArray(row) ? row : []).map((c, j) =>
            el(
              "td",
              { class: [numeric(j) ? "num" : "", marked.has(`${i}:${j}`) ? "hl" : ""].join(" ").trim() || null },
              cellText(c),
            ),
          ),
        ),
      ),
    ),
    total > shown ? el("p", { class: "small muted" }, `共 ${total} 行，显示前 ${shown} 行`) : null,
    typeof t.sql === "string" && t.sql
      ? el(
          "details",
          { class: "table-sql" },
          el("summary", { class: "small muted" }, "查询语句（SQL）"),
          el("pre", {}, el("code", {}, t.sql)),
        )
      : null,
    typeof t.fallback_reason === "string" && t.fallback_reason
      ? el("p", { class: "small muted" }, `未采用计算结果：${t.fallback_reason}`)
      : null,
  );
}

/** The 「FAQ」 badge: the answer is the entry's answer word for word. */
export function faqBadge(faq) {
  const pct = typeof faq.score === "number" ? `（匹配度 ${score(faq.score)}）` : "";
  return el(
    "p",
    {
      class: "faq-hit",
      "data-testid": "faq-badge",
      title: "命中常见问题：直接给出维护者写好的答案，没有调用大模型",
    },
    el("span", { class: "flag ok" }, "FAQ"),
    el("span", { class: "faq-question" }, faq.question),
    el("span", { class: "muted small" }, pct),
  );
}

/** 「您是不是想问：」 buttons; a click asks that question (``onAsk``) in the same tab. */
export function suggestionList(questions, onAsk) {
  return el(
    "div",
    { class: "suggestions", "data-testid": "suggestions" },
    el("span", { class: "muted small" }, "您是不是想问："),
    questions
      .slice(0, MAX_SUGGESTIONS)
      .map((q) =>
        el(
          "button",
          { type: "button", class: "chip", "data-testid": "suggestion", onclick: () => onAsk && onAsk(q) },
          q,
        ),
      ),
  );
}

/** The answer id, small (for 👍/👎 and the owner's 提问记录). */
export function answerIdNode(id) {
  return el(
    "span",
    { class: "answer-id muted", "data-testid": "answer-id", title: "回答编号（反馈与提问记录用）" },
    `回答编号：${id}`,
  );
}

/**
 * The pieces an answer carries besides its text (null where it has none): the FAQ ``badge``, the
 * result ``table``, the ``suggestions`` (``onAsk`` asks one), the 👍/👎 ``feedback`` and the ``id``.
 */
export function answerParts(source, { onAsk = null } = {}) {
  const f = answerFields(source);
  return {
    fields: f,
    badge: f.faq ? faqBadge(f.faq) : null,
    table: f.table ? answerTable(f.table) : null,
    suggestions: f.suggestions.length ? suggestionList(f.suggestions, onAsk) : null,
    feedback: f.answer_id ? feedbackBar(f.answer_id) : null,
    id: f.answer_id ? answerIdNode(f.answer_id) : null,
  };
}

/**
 * For an answer drawn without a bubble (房源, 购房顾问): {top, bottom}, either null — the badge,
 * table and suggestions above, 👍/👎 and the id in a footer below.
 */
export function answerMeta(source, options = {}) {
  const p = answerParts(source, options);
  const top = [p.badge, p.table, p.suggestions].filter(Boolean);
  return {
    fields: p.fields,
    top: top.length ? el("div", { class: "answer-meta" }, top) : null,
    bottom: p.feedback ? el("div", { class: "answer-foot actions" }, p.feedback, p.id) : null,
  };
}
