// 通用问答: chat with any KB over POST /api/v1/qa (stream: true). The answer streams token by
// token as sanitized markdown; the conversation is kept in localStorage (last 40 turns) and its
// last messages go with each question as ``history``, so a follow-up (「它在哪个校区？」) is
// understood: the server's standalone question shows under it as 「理解为：…」. 新对话 starts over.

import { AnswerBubble, userBubble } from "./bubble.js";
import { historyOf, newConversationNote, showUnderstood } from "./conversation.js";
import { commandLine, showSetup } from "./setup.js";
import { streamEvents } from "./sse.js";
import { $, el, emptyNode, store } from "./util.js";

const HISTORY_KEY = "zhiwen.chat.history.v1";
// apps answered in a tab of their own (房源, 政策问答, 购房顾问): the others (菜谱问答, an installed
// app) are asked here, so this tab says when they are not set up
const OWN_TABS = new Set(["listings", "policy", "advisor"]);
const MAX_TURNS = 40;

export function createChatView(app) {
  const thread = $("#chat-thread");
  const kbSelect = $("#chat-kb");
  const topK = $("#chat-topk");
  let turns = store.get(HISTORY_KEY, []);
  if (!Array.isArray(turns)) turns = [];

  function fillKbs() {
    const keep = kbSelect.value || store.get("zhiwen.chat.kb", "");
    emptyNode(kbSelect);
    for (const kb of app.kbs) {
      const label = kb.app ? `${kb.name}（${app.appTitle(kb.app)}）` : kb.name;
      kbSelect.append(el("option", { value: kb.name }, label));
    }
    if (!app.kbs.length) kbSelect.append(el("option", { value: "" }, "（还没有知识库）"));
    const here = app.config.apps.map((a) => a.name).filter((n) => !OWN_TABS.has(n));
    const none = app.kbs.length
      ? null
      : el(
          "p",
          {},
          el("strong", {}, "还没有知识库"),
          "：运行 ",
          commandLine("zhiwen index --kb 名称 <目录>"),
          " 导入文档，或在「知识库」页上传",
        );
    showSetup($("#view-chat"), app, here, [none]);
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
    turns.push(turn);
    turns = turns.slice(-MAX_TURNS);
    store.set(HISTORY_KEY, turns);
  }

  /** The turns before ``turn`` (a retry is asked with the conversation it was first asked in). */
  const before = (turn) => {
    const i = turns.indexOf(turn);
    return i < 0 ? [] : turns.slice(0, i);
  };

  function restore() {
    if (!turns.length) return;
    emptyNode(thread);
    for (const turn of turns) {
      const user = userBubble(turn.question);
      showUnderstood(user, turn.question, turn.standalone);
      thread.append(user);
      const bubble = new AnswerBubble({
        question: turn.question,
        onRetry: () => app.run(() => ask(turn.question, turn.kb, before(turn))),
      });
      bubble.setText(turn.answer);
      bubble.setSources(turn.sources);
      bubble.setFlags(turn.flags);
      if (turn.meta) bubble.setMeta(turn.meta, app.ask);
      bubble.node.classList.add("restored");
      thread.append(bubble.node);
    }
  }

  async function ask(question, kbName = kbSelect.value, prior = turns.slice()) {
    if (!kbName) throw new Error("请先选择知识库");
    store.set("zhiwen.chat.kb", kbName);
    thread.querySelector(".empty")?.remove();
    const user = userBubble(question);
    thread.append(user);
    const bubble = new AnswerBubble({
      question,
      onRetry: () => app.run(() => ask(question, kbName, prior)),
    });
    thread.append(bubble.node);
    bubble.node.scrollIntoView({ block: "end" });
    bubble.setBusy(true);
    let flags = {};
    let meta = null;
    let standalone = null;
    const body = { kb: kbName, question, stream: true };
    const history = historyOf(prior);
    if (history.length) body.history = history;
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
            // the streamed reply was not the answer (it failed the grounding check, or was tidied):
            // the done frame carries the text to show instead
            if (typeof ev.answer === "string") bubble.setText(ev.answer);
            bubble.setFlags(ev);
            meta = bubble.setMeta(ev, app.ask);
            standalone = ev.standalone_question || null;
            showUnderstood(user, question, standalone);
          } else if (ev.type === "error") throw Object.assign(new Error(ev.message), { code: ev.code });
        },
        { signal: app.signal() },
      );
      bubble.setText(bubble.text || "（没有回答）");
      save({
        question,
        kb: kbName,
        answer: bubble.text,
        standalone,
        sources: bubble.sources,
        flags: {
          llm_used: flags.llm_used,
          extractive_reason: flags.extractive_reason,
          answerable: flags.answerable,
          answer_type: flags.answer_type,
        },
        meta,
      });
    } catch (err) {
      if (err.name === "AbortError") bubble.append("\n\n（已停止）");
      else bubble.showError(err);
    } finally {
      bubble.setBusy(false);
    }
  }

  // 新对话: forget the conversation (what is sent as history) and clear the thread
  $("#chat-clear").addEventListener("click", () => {
    if (app.running) app.controller?.abort();
    turns = [];
    store.remove(HISTORY_KEY);
    emptyNode(thread).append(newConversationNote());
    $("#chat-input").focus();
  });

  return {
    name: "chat",
    placeholder: "输入问题或追问（Enter 发送，Shift+Enter 换行）",
    shortPlaceholder: "输入问题或追问",
    init() {
      fillKbs();
      restore();
    },
    refreshKbs: fillKbs,
    ask: (q) => ask(q),
    busyNode: thread,
  };
}
