// The message bubbles of the chat tabs: the user's question and the answer bubble
// (data-testid="chat-answer") that renders streamed markdown, flags, sources, copy and retry,
// and what every answer carries (answermeta.js: 👍/👎, its id, the FAQ badge, suggestions, a table).

import { answerMeta } from "./answermeta.js";
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
    this.metaTop = el("div", { class: "meta-top" });
    this.sourcesBox = el("div", { class: "sources-box" });
    this.metaBottom = el("div", { class: "meta-bottom" });
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
        this.body,
        this.extra,
        this.metaTop,
        this.sourcesBox,
        this.actions,
        this.metaBottom,
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

  setFlags({ llm_used, extractive_reason, answerable, cached } = {}) {
    emptyNode(this.flags);
    if (llm_used === true) this.flags.append(el("span", { class: "flag ok" }, "大模型生成"));
    else if (llm_used === false) {
      const why = EXTRACTIVE_REASONS[extractive_reason] || "";
      this.flags.append(el("span", { class: "flag warn" }, `摘录式回答${why ? `（${why}）` : ""}`));
    }
    if (answerable === false)
      this.flags.append(el("span", { class: "flag muted" }, "知识库中可能没有相关内容"));
    if (cached) this.flags.append(el("span", { class: "flag muted" }, "缓存"));
  }

  /** The answer's id, 👍/👎, FAQ badge, suggestions (``onAsk`` asks one) and table, from the
   * ``done`` event or the REST answer ``source``; returns the fields read (answermeta.js). */
  setMeta(source, onAsk = null) {
    const meta = answerMeta(source, { onAsk });
    this.metaTop.replaceChildren(...(meta.top ? [meta.top] : []));
    this.metaBottom.replaceChildren(...(meta.bottom ? [meta.bottom] : []));
    if (meta.fields.answer_type) this.node.dataset.answerType = meta.fields.answer_type;
    return meta.fields;
  }

  showError(err) {
    this.body.replaceChildren();
    this.extra.replaceChildren(errorBox(err));
  }
}
