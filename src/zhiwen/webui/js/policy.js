// 政策问答: POST /api/v1/policy/ask (stream: true). Shows the answer, the detected intent, the
// rewritten question and the two source groups — specialist KBs (searched with the rewritten
// question) and the general KB (the original question) — with scores; a visa policy whose
// end date is before the answer's as_of date is marked 已到期. The conversation's last messages go
// with each question as ``history``: 「需要什么材料？」 keeps the country and intent, 「那西班牙呢？」
// asks again for Spain; the standalone question shows as 「理解为：…」. 新对话 starts over.

import { AnswerBubble, userBubble } from "./bubble.js";
import { historyOf, newConversationNote, showUnderstood } from "./conversation.js";
import { dateField, isoDate } from "./datefield.js";
import { showSetup } from "./setup.js";
import { sourceList } from "./sources.js";
import { streamEvents } from "./sse.js";
import { $, el, emptyNode } from "./util.js";

const INTENTS = {
  visa_free: "免签入境",
  airline_visa_free: "机组 / 航司免签",
  both: "免签 + 机组",
  other: "一般法规",
};

function today() {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/** A source is expired when its policy end date (YYYY-MM-DD) is before ``asOf``. */
export function isExpired(source, asOf) {
  const end = source.metadata && source.metadata.end_date;
  return typeof end === "string" && /^\d{4}-\d{2}-\d{2}$/.test(end) && end < asOf;
}

export function createPolicyView(app) {
  const thread = $("#policy-thread");
  const asOfInput = dateField($("#policy-asof"));
  let turns = []; // this conversation: [{question, answer, standalone}]

  /** A source's group: the server says it (``group``); older servers: by the general KB's name. */
  function isGeneral(source, general) {
    return source.group ? source.group === "general" : source.kb === general;
  }

  /** The policy app's general KB: from ui-config's app KB list (the 通用 one), else by name. */
  function generalKb() {
    const policy = app.config.apps.find((a) => a.name === "policy");
    const kbs = (policy && policy.kbs) || [];
    const named = kbs.find((k) => /general|通用/.test(`${k.name} ${k.description || ""}`));
    return named ? named.name : "policy_general";
  }

  function metaPanel(meta) {
    const rows = [
      ["识别意图", `${INTENTS[meta.intent] || meta.intent}（${meta.intent}）`],
      ["改写问题", meta.rewritten_question || "（一般问题，不改写）"],
      [
        "检索策略",
        meta.strategy === "dual" ? "双路：改写问题查专业库 + 原问题查通用库" : "单路：原问题查全部知识库",
      ],
    ];
    if (meta.fallback_reason) rows.push(["降级原因", meta.fallback_reason]);
    return el(
      "dl",
      { class: "kv policy-meta", "data-testid": "policy-meta" },
      rows.map(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k }, v)]),
    );
  }

  function sourceGroups(bubble, sources, asOf, question) {
    const general = generalKb();
    const numbered = sources.map((s, k) => ({ s, n: k + 1 }));
    const groups = [
      ["专业库来源", "按改写后的问题检索", numbered.filter((x) => !isGeneral(x.s, general)), "specialist"],
      ["通用库来源", "按原问题检索", numbered.filter((x) => isGeneral(x.s, general)), "general"],
    ];
    const decorate = (s, btn) => {
      if (isExpired(s, asOf)) {
        btn.classList.add("expired");
        btn.append(
          el(
            "span",
            { class: "flag bad", title: `截止日期 ${s.metadata.end_date}` },
            `已到期（${s.metadata.end_date}）`,
          ),
        );
      }
    };
    emptyNode(bubble.sourcesBox);
    for (const [title, how, items, key] of groups) {
      if (!items.length) continue;
      bubble.sourcesBox.append(
        el(
          "section",
          { class: "source-group", "data-group": key },
          el(
            "h3",
            { class: "sub" },
            `${title}（${items.length}）`,
            el("span", { class: "muted" }, ` · ${how}`),
          ),
          sourceList(
            items.map((x) => x.s),
            { question, decorate, numbers: items.map((x) => x.n) },
          ),
        ),
      );
    }
  }

  async function ask(question, prior = turns.slice()) {
    const chosen = isoDate(asOfInput.value); // checked before the question shows in the thread
    if (chosen === null) {
      asOfInput.focus();
      throw new Error("日期格式应为 2026年06月01日 或 2026-06-01");
    }
    thread.querySelector(".empty")?.remove();
    const user = userBubble(question);
    thread.append(user);
    const bubble = new AnswerBubble({
      question,
      onRetry: () => app.run(() => ask(question, prior)),
      label: "政策回答",
    });
    thread.append(bubble.node);
    bubble.node.scrollIntoView({ block: "end" });
    bubble.setBusy(true);
    const body = { question, stream: true };
    if (chosen) body.as_of = chosen;
    const history = historyOf(prior);
    if (history.length) body.history = history;
    let standalone = null;
    let asOf = chosen || today();
    let sources = [];
    try {
      await streamEvents(
        "/api/v1/policy/ask",
        body,
        (ev) => {
          if (ev.type === "meta") {
            if (ev.standalone_question) standalone = ev.standalone_question;
            showUnderstood(user, question, standalone);
            bubble.node.querySelector(".policy-meta")?.remove();
            bubble.flags.after(metaPanel(ev)); // intent and rewrite first, then the answer
          } else if (ev.type === "sources") {
            sources = ev.sources || [];
            bubble.sources = sources;
            sourceGroups(bubble, sources, asOf, question);
          } else if (ev.type === "delta") bubble.append(ev.text || "");
          else if (ev.type === "done") {
            if (ev.as_of) asOf = ev.as_of;
            if (ev.standalone_question) standalone = ev.standalone_question;
            showUnderstood(user, question, standalone);
            if (ev.answer) bubble.setText(ev.answer);
            if (ev.sources) sources = ev.sources;
            bubble.sources = sources;
            sourceGroups(bubble, sources, asOf, question);
            bubble.setFlags(ev);
            bubble.setMeta(ev, app.ask);
            if (ev.kb_errors && Object.keys(ev.kb_errors).length) {
              bubble.extra.append(
                el(
                  "p",
                  { class: "flag warn" },
                  `部分知识库不可用：${Object.entries(ev.kb_errors)
                    .map(([k, v]) => `${k}（${v}）`)
                    .join("；")}`,
                ),
              );
            }
          } else if (ev.type === "error") throw Object.assign(new Error(ev.message), { code: ev.code });
        },
        { signal: app.signal() },
      );
      bubble.setText(bubble.text || "（没有回答）");
      if (thread.contains(bubble.node)) turns.push({ question, answer: bubble.text, standalone });
    } catch (err) {
      if (err.name === "AbortError") bubble.append("\n\n（已停止）");
      else bubble.showError(err);
    } finally {
      bubble.setBusy(false);
    }
  }

  // 新对话: forget the conversation (what is sent as history) and clear the thread
  $("#policy-new").addEventListener("click", () => {
    if (app.running) app.controller?.abort();
    turns = [];
    emptyNode(thread).append(newConversationNote());
    $("#chat-input").focus();
  });

  return {
    name: "policy",
    placeholder: "如：法国人去中国免签吗？",
    shortPlaceholder: "如：法国人免签吗？",
    init() {
      showSetup($("#view-policy"), app, ["policy"]);
      emptyNode(thread).append(
        el(
          "div",
          { class: "empty" },
          el(
            "p",
            {},
            "询问免签、机组入出境、口岸与相关法规。回答附识别出的意图、改写后的问题和两组来源（专业库 / 通用库）；过期的免签政策会标出。",
          ),
          el("p", { class: "muted" }, "可以接着追问，如「需要什么材料？」「那西班牙呢？」；点「新对话」重新开始。"),
        ),
      );
    },
    refreshKbs: () => showSetup($("#view-policy"), app, ["policy"]),
    ask,
    busyNode: thread,
  };
}
