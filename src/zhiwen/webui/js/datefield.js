// Dates in Chinese whatever the browser's language. A native <input type="date"> shows its
// browser's format (「mm/dd/yyyy」 in an English Chromium, also on a Chinese page), so a date field
// here is a text field showing 「2026年06月01日」 that also reads 2026-06-01, 2026/6/1, 2026.6.1,
// 2026年6月1日 and 20260601, plus a button opening the browser's own calendar (a hidden native
// date input) to pick one. The API gets ISO dates (``isoDate``).
//
// Example (the input's markup: <input id="policy-asof" type="text" data-date>):
//   dateField($("#policy-asof"));
//   isoDate($("#policy-asof").value)   // "2026-06-01", "" when empty, null when not a date

import { el } from "./util.js";

const PATTERNS = [
  /^(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日?$/,
  /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/,
  /^(\d{4})(\d{2})(\d{2})$/,
];

const pad = (n) => String(n).padStart(2, "0");

/** "2026年6月1日" / "2026-06-01" / … → "2026-06-01"; "" → ""; not a real date → null. */
export function isoDate(text) {
  const raw = String(text || "").trim();
  if (!raw) return "";
  for (const re of PATTERNS) {
    const m = re.exec(raw);
    if (!m) continue;
    const [y, mo, d] = m.slice(1).map(Number);
    const day = new Date(Date.UTC(y, mo - 1, d));
    const real = day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d;
    return real ? `${y}-${pad(mo)}-${pad(d)}` : null;
  }
  return null;
}

/** "2026-06-01" → "2026年06月01日" (anything else as it is). */
export function chineseDate(iso) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso || "");
  return m ? `${m[1]}年${m[2]}月${m[3]}日` : iso || "";
}

/** Make ``input`` (a text input) a Chinese date field with a calendar button; returns it. */
export function dateField(input) {
  input.type = "text";
  input.inputMode = "numeric";
  input.autocomplete = "off";
  input.placeholder = input.placeholder || "年/月/日";
  input.classList.add("date-text");
  const label = input.labels && input.labels[0] ? input.labels[0].textContent.trim() : "日期";
  const native = el("input", {
    type: "date",
    class: "date-native",
    tabindex: "-1",
    "aria-hidden": "true",
    "aria-label": label,
    lang: "zh-CN",
  });
  const pick = el(
    "button",
    { type: "button", class: "ghost small date-pick", "aria-label": `选择${label}` },
    "日历",
  );
  const normalise = () => {
    const iso = isoDate(input.value);
    if (iso) input.value = chineseDate(iso);
    input.setCustomValidity(iso === null ? "日期格式应为 2026年06月01日 或 2026-06-01" : "");
  };
  input.addEventListener("change", normalise);
  input.addEventListener("blur", normalise);
  pick.addEventListener("click", () => {
    native.value = isoDate(input.value) || "";
    try {
      native.showPicker();
    } catch {
      native.focus(); // an older browser: the hidden input takes the keyboard instead
    }
  });
  native.addEventListener("change", () => {
    input.value = chineseDate(native.value);
    input.setCustomValidity("");
    input.dispatchEvent(new Event("change", { bubbles: true }));
  });
  // the field and its button stay on one line, in the label or field that held the input
  const wrap = el("span", { class: "date-wrap" });
  input.replaceWith(wrap);
  wrap.append(input, pick, native);
  return input;
}
