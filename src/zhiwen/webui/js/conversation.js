// A conversation in a chat tab: the turns so far, sent with each question as OpenAI-style
// history ({role, content}, oldest first, the last few messages only), and the 「理解为：…」 line
// shown under a question when the server answered it as a different, standalone question.

import { el } from "./util.js";

/** Messages of history sent with a question (the server's conversation stage reads only the last few). */
export const HISTORY_MESSAGES = 10;
/** Characters kept of an earlier answer (the stage reads only its start; requests stay small). */
const ANSWER_CHARS = 1200;
/** The history's size budget in UTF-8 bytes: the server refuses bodies over 64 KiB. */
const HISTORY_BYTES = 32 * 1024;

const bytes = (s) => new TextEncoder().encode(s).length;

/**
 * ``turns`` ([{question, answer}], oldest first; unanswered turns skipped) as OpenAI messages:
 * the last ``max`` messages, answers cut to their start, oldest dropped beyond the byte budget.
 */
export function historyOf(turns, max = HISTORY_MESSAGES) {
  const out = [];
  for (const t of turns || []) {
    const question = String((t && t.question) || "").trim();
    const answer = String((t && t.answer) || "").trim();
    if (!question || !answer) continue;
    out.push({ role: "user", content: question }, { role: "assistant", content: answer.slice(0, ANSWER_CHARS) });
  }
  let messages = out.slice(-max);
  while (messages.length > 2 && bytes(JSON.stringify(messages)) > HISTORY_BYTES) messages = messages.slice(2);
  return messages;
}

const plain = (s) =>
  String(s || "")
    .replace(/[\s？?。！!，,、；;：:"“”'‘’]/g, "")
    .toLowerCase();

/** Whether the server's ``standalone`` question says more than what was typed. */
export function differs(typed, standalone) {
  return Boolean(standalone) && plain(standalone) !== plain(typed);
}

/**
 * Put 「理解为：…」 under the user bubble ``userNode`` when ``standalone`` differs from ``typed``
 * (replacing an earlier line; removed when it no longer differs). Returns whether it is shown.
 */
export function showUnderstood(userNode, typed, standalone) {
  if (!userNode) return false;
  userNode.querySelector(".understood")?.remove();
  if (!differs(typed, standalone)) return false;
  userNode.append(
    el(
      "p",
      { class: "understood", "data-testid": "understood", title: "结合前面的对话理解的完整问题（检索用的就是它）" },
      el("span", { class: "understood-label" }, "理解为："),
      el("span", { class: "understood-text" }, standalone),
    ),
  );
  return true;
}

/** The 「已开始新对话」 note a tab shows after 新对话. */
export function newConversationNote(text = "已开始新对话：之后的问题不再结合前面的内容理解。") {
  return el("div", { class: "empty" }, el("p", {}, text));
}
