// 👍/👎 under an answer: POST /api/v1/feedback {answer_id, rating, reason?, comment?}. 👎 opens
// the reasons (「答非所问」「内容过时」「没有引用」「其他」) and a text box first; a later rating of
// the same answer replaces the earlier one (the server keeps one per caller). Feedback is for the
// KB's owner (提问记录), never a ranking signal.

import { api, el, errorBox, toast } from "./util.js";

/** The reasons a 👎 may give: the code sent, the label shown (as zhiwen.questionlog names them). */
export const FEEDBACK_REASONS = [
  ["off_topic", "答非所问"],
  ["outdated", "内容过时"],
  ["no_citation", "没有引用"],
  ["other", "其他"],
];
export const REASON_LABELS = Object.fromEntries(FEEDBACK_REASONS);
const MAX_COMMENT = 1000;

/** Send one rating; returns the server's record ({answer_id, rating, reason, comment}). */
export function sendFeedback(answerId, rating, reason = null, comment = "") {
  const body = { answer_id: answerId, rating };
  if (reason) body.reason = reason;
  if (comment) body.comment = comment;
  return api("/api/v1/feedback", { body });
}

function reasonForm(onSubmit, onCancel) {
  const name = `reason-${Math.random().toString(36).slice(2, 10)}`;
  const comment = el("textarea", {
    rows: "2",
    maxlength: String(MAX_COMMENT),
    placeholder: "补充说明（可选）：哪里不对，正确的应该是什么",
    "aria-label": "补充说明",
    "data-testid": "feedback-comment",
  });
  const form = el(
    "form",
    { class: "feedback-form", "data-testid": "feedback-form" },
    el(
      "fieldset",
      { class: "radios" },
      el("legend", {}, "哪里不好？"),
      FEEDBACK_REASONS.map(([code, label], i) =>
        el(
          "label",
          {},
          el("input", {
            type: "radio",
            name,
            value: code,
            checked: i === 0,
            "data-testid": `reason-${code}`,
          }),
          ` ${label}`,
        ),
      ),
    ),
    comment,
    el(
      "div",
      { class: "row" },
      el("button", { type: "submit", class: "primary small", "data-testid": "feedback-submit" }, "提交"),
      el("button", { type: "button", class: "ghost small", onclick: onCancel }, "取消"),
    ),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const picked = form.querySelector(`input[name="${name}"]:checked`);
    onSubmit(picked ? picked.value : "other", comment.value.trim());
  });
  return form;
}

/**
 * The 👍/👎 bar of the answer ``answerId`` (data-testid="feedback"; data-rated="up"|"down" once
 * the server took a rating).
 */
export function feedbackBar(answerId) {
  const status = el("span", { class: "muted small feedback-status", "aria-live": "polite" });
  const up = el(
    "button",
    {
      type: "button",
      class: "ghost small thumb",
      "aria-label": "有用",
      title: "有用",
      "data-testid": "thumb-up",
    },
    "👍",
  );
  const down = el(
    "button",
    {
      type: "button",
      class: "ghost small thumb",
      "aria-label": "没用",
      title: "没用",
      "data-testid": "thumb-down",
    },
    "👎",
  );
  const bar = el("div", { class: "feedback-bar" }, up, down, status);
  const box = el("div", { class: "feedback", "data-testid": "feedback" }, bar);
  let form = null;

  const closeForm = () => {
    form?.remove();
    form = null;
    down.setAttribute("aria-expanded", "false");
  };

  async function rate(rating, reason = null, comment = "") {
    up.disabled = down.disabled = true;
    bar.querySelector(".error")?.remove();
    try {
      await sendFeedback(answerId, rating, reason, comment);
      box.dataset.rated = rating;
      up.setAttribute("aria-pressed", String(rating === "up"));
      down.setAttribute("aria-pressed", String(rating === "down"));
      status.textContent = rating === "up" ? "谢谢！" : `已反馈：${REASON_LABELS[reason] || "没用"}`;
      closeForm();
      toast("已收到反馈", "ok");
    } catch (err) {
      bar.append(errorBox(err));
    } finally {
      up.disabled = down.disabled = false;
    }
  }

  up.addEventListener("click", () => rate("up"));
  down.setAttribute("aria-expanded", "false");
  down.addEventListener("click", () => {
    if (form) return closeForm();
    form = reasonForm((reason, comment) => rate("down", reason, comment), closeForm);
    box.append(form);
    down.setAttribute("aria-expanded", "true");
    form.querySelector("input")?.focus();
  });
  return box;
}
