// 通用问答: chat with any KB over POST /api/v1/qa (stream: true). The answer streams token by
// token as sanitized markdown; the conversation is kept in localStorage (last 40 turns).

import { AnswerBubble, userBubble } from "./bubble.js";
import { streamEvents } from "./sse.js";
import { $, el, emptyNode, store } from "./util.js";

const HISTORY_KEY = "zhiwen.chat.history.v1";
const MAX_TURNS = 40;

export function createChatView(app) {
  const thread = $("#chat-thread");
  const kbSelect = $("#chat-kb");
  const topK = $("#chat-topk");
  let history = store.get(HISTORY_KEY, []);

  function fillKbs() {
    const keep = kbSelect.value || store.get("zhiwen.chat.kb", "");
    emptyNode(kbSelect);
    for (const kb of app.kbs) {
      const label = kb.app ? `${kb.name}（${app.appTitle(kb.app)}）` : kb.name;
      kbSelect.append(el("option", { value: kb.name }, label));
    }
    if (!app.kbs.length) kbSelect.append(el("option", { value: "" }, "（还没有知识库）"));
    const preferred = [keep, "demo"].find((n) => app.kbs.some((k) => k.name === n));
    const generic = app.kbs.find((k) => !k.app);
    if (preferred) kbSelect.value = preferred;
    else if (generic) kbSelect.value = generic.name;
    renderEmpty();
  }

  function renderEmpty() {
    if (thread.querySelector(".msg")) return;
    emptyNode(thread).append(
      el(
        "div",
        { class: "empty" },
        el("p", {}, "选择知识库，在下方输入问题。回答逐字流式显示，点击来源编号可查看原文。"),
        el(
          "p",
          { class: "muted" },
          app.config.llm_configured ? "已配置大模型。" : "未配置大模型：回答直接摘自知识库（摘录式回答）。",
        ),
      ),
    );
  }

  function save(turn) {
    history.push(turn);
    history = history.slice(-MAX_TURNS);
    store.set(HISTORY_KEY, history);
  }

  function restore() {
    if (!history.length) return;
    emptyNode(thread);
    for (const turn of history) {
      thread.append(userBubble(turn.question));
      const bubble = new AnswerBubble({
        question: turn.question,
        onRetry: () => app.run(() => ask(turn.question, turn.kb)),
      });
      bubble.setText(turn.answer);
      bubble.setSources(turn.sources);
      bubble.setFlags(turn.flags);
      bubble.node.classList.add("restored");
      thread.append(bubble.node);
    }
  }

  async function ask(question, kbName = kbSelect.value) {
    if (!kbName) throw new Error("请先选择知识库");
    store.set("zhiwen.chat.kb", kbName);
    thread.querySelector(".empty")?.remove();
    thread.append(userBubble(question));
    const bubble = new AnswerBubble({ question, onRetry: () => app.run(() => ask(question, kbName)) });
    thread.append(bubble.node);
    bubble.node.scrollIntoView({ block: "end" });
    bubble.setBusy(true);
    let flags = {};
    const body = { kb: kbName, question, stream: true };
    const k = parseInt(topK.value, 10);
    if (k > 0) body.top_k = k;
    try {
      await streamEvents(
        "/api/v1/qa",
        body,
        (ev) => {
          if (ev.type === "sources") bubble.setSources(ev.sources);
          else if (ev.type === "delta") bubble.append(ev.text || "");
          else if (ev.type === "role_result")
            bubble.append(`\n\n### ${ev.icon || ""} ${ev.name}\n\n${ev.content}\n`);
          else if (ev.type === "done") {
            flags = ev;
            bubble.setFlags(ev);
          } else if (ev.type === "error") throw Object.assign(new Error(ev.message), { code: ev.code });
        },
        { signal: app.signal() },
      );
      bubble.setText(bubble.text || "（没有回答）");
      save({
        question,
        kb: kbName,
        answer: bubble.text,
        sources: bubble.sources,
        flags: {
          llm_used: flags.llm_used,
          extractive_reason: flags.extractive_reason,
          answerable: flags.answerable,
        },
      });
    } catch (err) {
      if (err.name === "AbortError") bubble.append("\n\n（已停止）");
      else bubble.showError(err);
    } finally {
      bubble.setBusy(false);
    }
  }

  $("#chat-clear").addEventListener("click", () => {
    history = [];
    store.remove(HISTORY_KEY);
    emptyNode(thread);
    renderEmpty();
  });

  return {
    name: "chat",
    placeholder: "输入问题（Enter 发送，Shift+Enter 换行）",
    init() {
      fillKbs();
      restore();
    },
    refreshKbs: fillKbs,
    ask: (q) => ask(q),
    busyNode: thread,
  };
}
