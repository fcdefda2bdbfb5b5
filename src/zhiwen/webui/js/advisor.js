// 购房顾问: POST /api/v1/chat (SSE). A role card (data-testid="role-card": icon, name) appears at
// each role_start and fills at its role_result, with the role's tool results as small tables.
// 深度分析 switches to discussion mode: the negotiation (discussion events) shows as a thread.
// The session id lives in localStorage, so the advisor remembers the user across questions; the
// conversation's messages go along as ``history`` too (where the server reads it). The facts the
// advisor used show under the question as 「理解为：按总价…计算：…」, so a misreading can be
// corrected in the next turn (「年限改成30年」). 新对话 starts a new session.

import { answerMeta } from "./answermeta.js";
import { userBubble } from "./bubble.js";
import { historyOf, newConversationNote, showUnderstood } from "./conversation.js";
import { renderMarkdown } from "./markdown.js";
import { showSetup } from "./setup.js";
import { streamEvents } from "./sse.js";
import { toolTable } from "./tables.js";
import { $, el, emojiRenders, emptyNode, errorBox, store, uid } from "./util.js";

const SESSION_KEY = "zhiwen.advisor.session";
// the advisor's server keeps the last 20 messages of a session: send as many, so they are its tail
const ADVISOR_HISTORY = 20;
const ICONS = { policy_expert: "📜", market_analyst: "📊", financial_advisor: "💰", home_advisor: "🏠" };

function roleIcon(role, icon, name) {
  const glyph = icon || ICONS[role] || "";
  const text = glyph && emojiRenders() ? glyph : (name || "?").slice(0, 1);
  return el(
    "span",
    { class: `role-icon role-${role || "x"}`, "aria-hidden": "true", "data-icon": glyph },
    text,
  );
}

function toolsBlock(calls, open = true) {
  if (!calls || !calls.length) return null;
  const box = el(
    "details",
    { class: "tools", open },
    el("summary", {}, `工具结果（${calls.length}）`),
    el("div", { class: "tool-list" }, calls.map(toolTable)),
  );
  return box;
}

export function createAdvisorView(app) {
  const thread = $("#advisor-thread");
  const deep = $("#advisor-deep");
  const sessionLabel = $("#advisor-session");
  const stored = store.get(SESSION_KEY, null);
  let session = stored || uid();
  store.set(SESSION_KEY, session);
  let turns = []; // this page's conversation in the session: [{question, answer, standalone}]
  // history is sent only for a session this page holds from its start: a session kept from an
  // earlier visit has turns the page never saw, and a server that takes the client's history
  // as the truth would start that session again from the shorter one
  let whole = !stored;

  function showSession() {
    sessionLabel.textContent = `会话 ${session.slice(0, 8)}`;
  }

  function roleCard(ev) {
    const body = el("div", { class: "role-body" }, el("span", { class: "typing" }, "正在分析"));
    const node = el(
      "article",
      {
        class: "role-card",
        "data-testid": "role-card",
        "data-role": ev.role,
        "data-busy": "true",
        "aria-label": ev.name,
      },
      el("header", {}, roleIcon(ev.role, ev.icon, ev.name), el("h3", {}, ev.name)),
      body,
    );
    return { node, body };
  }

  function fillCard(card, ev) {
    card.node.dataset.busy = "false";
    card.body.replaceChildren(el("div", { class: "md" }, renderMarkdown(ev.content)));
    if (ev.assumptions && ev.assumptions.length)
      card.body.append(el("p", { class: "muted small" }, `假设：${ev.assumptions.join("；")}`));
    const tools = toolsBlock(ev.tool_calls, ev.tool_calls && ev.tool_calls.length <= 2);
    if (tools) card.body.append(tools);
    if (ev.number_check && ev.number_check.ok === false)
      card.body.append(el("p", { class: "flag warn" }, "数字核对未通过，已改用模板回答"));
  }

  function discussionItem(ev) {
    return el(
      "li",
      { class: "disc-msg", "data-round": ev.round },
      el(
        "div",
        { class: "disc-head" },
        roleIcon(ev.from, ev.from_icon || ev.icon, ev.from_name),
        el("strong", {}, ev.from_name),
        el("span", { class: "muted" }, ` → ${ev.to_name || "全体"} · 第 ${ev.round} 轮`),
      ),
      el("div", { class: "md" }, renderMarkdown(ev.content)),
      toolsBlock(ev.tool_calls, false),
    );
  }

  async function ask(question) {
    const prior = turns.slice();
    thread.querySelector(".empty")?.remove();
    const mode = deep.checked ? "discussion" : "standard";
    const turn = el("section", {
      class: "advisor-turn",
      "data-mode": mode,
      "aria-label": `咨询：${question}`,
    });
    const cards = el("div", { class: "role-cards" });
    const status = el(
      "p",
      { class: "muted small" },
      mode === "discussion" ? "深度分析：专家多轮协商中……" : "正在安排顾问……",
    );
    turn.append(status);
    let discussion = null;
    const user = userBubble(question);
    thread.append(user, turn);
    const said = []; // the answer as text, for the history: facts, then each role's message
    let standalone = null;
    let done = null;
    const body = { session_id: session, message: question, mode };
    const history = whole ? historyOf(prior, ADVISOR_HISTORY) : [];
    if (history.length) body.history = history;
    turn.scrollIntoView({ block: "start" });
    const open = new Map();
    turn.dataset.busy = "true";
    try {
      await streamEvents(
        "/api/v1/chat",
        body,
        (ev) => {
          if (ev.type === "facts") {
            if (ev.text) said.push(ev.text);
            standalone = ev.text ? `${ev.text}${question}` : null;
            showUnderstood(user, question, standalone);
          } else if (ev.type === "role_start") {
            const card = roleCard(ev);
            open.set(ev.role, card);
            if (!cards.isConnected) turn.append(cards);
            cards.append(card.node);
          } else if (ev.type === "role_result") {
            let card = open.get(ev.role);
            if (!card) {
              card = roleCard(ev);
              cards.append(card.node);
              if (!cards.isConnected) turn.append(cards);
            }
            fillCard(card, ev);
            said.push(`### ${ev.name || ev.role}\n${ev.content || ""}`);
          } else if (ev.type === "discussion") {
            if (!discussion) {
              discussion = el("ol", { class: "discussion", "aria-label": "专家讨论" });
              turn.append(el("h3", { class: "sub" }, "专家讨论"), discussion);
            }
            discussion.append(discussionItem(ev));
          } else if (ev.type === "done") {
            if (ev.session_id) session = ev.session_id;
            if (ev.standalone_question) standalone = ev.standalone_question;
            showUnderstood(user, question, standalone);
            const plan = ev.plan || {};
            status.textContent = plan.reason ? `安排：${plan.reason}` : "";
            done = ev;
          } else if (ev.type === "error") throw Object.assign(new Error(ev.message), { code: ev.code });
        },
        { signal: app.signal() },
      );
      if (discussion && cards.isConnected) turn.append(cards); // the consensus card after the thread
      if (done) {
        const meta = answerMeta(done, { onAsk: app.ask });
        turn.append(...[meta.top, meta.bottom].filter(Boolean));
      }
      if (thread.contains(turn)) turns.push({ question, answer: said.join("\n\n"), standalone });
    } catch (err) {
      if (err.name === "AbortError") turn.append(el("p", { class: "muted" }, "已停止"));
      else turn.append(errorBox(err));
      for (const c of open.values()) if (c.node.dataset.busy === "true") c.node.dataset.busy = "false";
    } finally {
      turn.dataset.busy = "false";
    }
  }

  // 新对话: a new session id, so the advisor starts from no facts
  $("#advisor-new").addEventListener("click", () => {
    if (app.running) app.controller?.abort();
    session = uid();
    store.set(SESSION_KEY, session);
    turns = [];
    whole = true;
    showSession();
    emptyNode(thread).append(newConversationNote("已开始新对话：之前说过的预算、收入等不再沿用。"));
    $("#chat-input").focus();
  });

  return {
    name: "advisor",
    placeholder: "如：总价300万首付三成，30年利率3.1%，月供多少？",
    shortPlaceholder: "如：300万首付三成月供多少？",
    init() {
      showSetup($("#view-advisor"), app, ["advisor"]);
      showSession();
      emptyNode(thread).append(
        el(
          "div",
          { class: "empty" },
          el(
            "p",
            {},
            "政策专家、市场分析师、财务顾问和购房顾问按问题分工作答，每位顾问的计算和检索结果都列在卡片里。",
          ),
          el(
            "p",
            { class: "muted" },
            "打开「深度分析」让专家多轮协商；同一对话会记住你说过的预算、收入和城市，可以接着改（如「年限改成30年」「首付改成两成」）。",
          ),
        ),
      );
    },
    refreshKbs: () => showSetup($("#view-advisor"), app, ["advisor"]),
    ask,
    busyNode: thread,
  };
}
