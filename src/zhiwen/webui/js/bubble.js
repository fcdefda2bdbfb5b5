// The message bubbles of the chat tabs: the user's question and the answer bubble
// (data-testid="chat-answer") that renders streamed markdown, flags, sources, copy and retry,
// and what every answer carries (answermeta.js: 👍/👎, its id, the FAQ badge, suggestions, a table).

import { answerParts } from "./answermeta.js";
import { renderMarkdown } from "./markdown.js";
import { openSource, sourceList } from "./sources.js";
import { copyText, el, emptyNode, errorBox, plainMarks, toast } from "./util.js";

// why an answer was written without the LLM (done.extractive_reason), as zhiwen.clikit.view says it
const EXTRACTIVE_REASONS = {
  no_llm: "未配置大模型",
  llm_error: "大模型调用失败",
  error: "大模型调用出错",
  empty: "大模型返回了空内容",
  timeout: "大模型响应超时",
  busy: "大模型繁忙",
  breaker_open: "大模型连续失败，暂停调用",
  llm_echoed_prompt: "大模型复述了提示词，没有作答",
  llm_uncited: "大模型回答没有标注引用来源",
  llm_wrong_language: "大模型没有用中文回答",
  llm_truncated: "大模型回答不完整",
  llm_unsupported_numbers: "大模型回答中有无法核实的数字",
};

export function userBubble(text) {
  return el("div", { class: "msg msg-user" }, el("div", { class: "bubble" }, text));
}

export class AnswerBubble {
  constructor({ question = "", onRetry = null, label = "回答" } = {}) {
    this.question = question;
    this.text = "";
    this.sources = [];
    this.frame = 0;
    this.flags = el("div", { class: "flags" });
    this.body = el("div", { class: "md", "aria-live": "polite" });
    this.extra = el("div", { class: "extra" });
    this.badges = el("div", { class: "meta-badges" });
    this.metaTop = el("div", { class: "meta-top answer-meta" });
    this.sourcesBox = el("div", { class: "sources-box" });
    const copy = el("button", { type: "button", class: "ghost small", "data-action": "copy" }, "复制");
    copy.addEventListener("click", async () =>
      toast((await copyText(this.text)) ? "已复制回答" : "复制失败", "ok"),
    );
    this.actions = el("div", { class: "actions" }, copy);
    if (onRetry) {
      const retry = el("button", { type: "button", class: "ghost small", "data-action": "retry" }, "重试");
      retry.addEventListener("click", () => onRetry(this));
      this.actions.append(retry);
    }
    this.node = el(
      "article",
      { class: "msg msg-answer", "data-testid": "chat-answer", "aria-label": label },
      el(
        "div",
        { class: "bubble" },
        this.flags,
        this.badges,
        this.body,
        this.extra,
        this.metaTop,
        this.sourcesBox,
        this.actions,
      ),
    );
  }

  setBusy(on) {
    this.node.dataset.busy = on ? "true" : "false";
    if (on) this.node.setAttribute("aria-busy", "true");
    else this.node.removeAttribute("aria-busy");
    if (on && !this.text) this.body.replaceChildren(el("span", { class: "typing" }, "正在思考"));
  }

  cite = (n) => {
    const s = this.sources[n - 1];
    if (s) openSource(s, { question: this.question, index: n });
  };

  render() {
    this.frame = 0;
    this.body.replaceChildren(
      renderMarkdown(plainMarks(this.text), { onCite: this.sources.length ? this.cite : null }),
    );
  }

  /** Append a streamed piece; renders at most once per animation frame. */
  append(piece) {
    this.text += piece;
    if (!this.frame) this.frame = requestAnimationFrame(() => this.render());
  }

  setText(text) {
    this.text = text || "";
    if (this.frame) cancelAnimationFrame(this.frame);
    this.render();
  }

  setSources(sources, options = {}) {
    this.sources = sources || [];
    emptyNode(this.sourcesBox);
    if (!this.sources.length) return;
    this.sourcesBox.append(
      el("h3", { class: "sub" }, `来源（${this.sources.length}）`),
      sourceList(this.sources, { question: this.question, ...options }),
    );
    if (this.text) this.render(); // citation markers become buttons
  }

  setFlags({ llm_used, extractive_reason, answerable, cached, answer_type } = {}) {
    emptyNode(this.flags);
    if (answer_type === "faq") {
      /* the FAQ badge (setMeta) says how it was answered: no LLM, no extract */
    } else if (llm_used === true) this.flags.append(el("span", { class: "flag ok" }, "大模型生成"));
    else if (llm_used === false) {
      const why = EXTRACTIVE_REASONS[extractive_reason] || "";
      this.flags.append(el("span", { class: "flag warn" }, `摘录式回答${why ? `（${why}）` : ""}`));
    }
    if (answerable === false)
      this.flags.append(el("span", { class: "flag muted" }, "知识库中可能没有相关内容"));
    if (cached) this.flags.append(el("span", { class: "flag muted" }, "缓存"));
  }

  /** What the answer carries besides its text (answermeta.js), from the ``done`` event or the
   * REST answer ``source``: the FAQ badge above the text, the table and 「您是不是想问」 (``onAsk``
   * asks one) under it, 👍/👎 and the answer id in the actions row. Returns the fields read. */
  setMeta(source, onAsk = null) {
    const p = answerParts(source, { onAsk });
    this.badges.replaceChildren(...[p.badge].filter(Boolean));
    this.metaTop.replaceChildren(...[p.table, p.suggestions].filter(Boolean));
    for (const n of this.actions.querySelectorAll(".feedback, .answer-id")) n.remove();
    this.actions.append(...[p.feedback, p.id].filter(Boolean));
    if (p.fields.answer_type) this.node.dataset.answerType = p.fields.answer_type;
    return p.fields;
  }

  showError(err) {
    this.body.replaceChildren();
    this.extra.replaceChildren(errorBox(err));
  }
}
