// 统计: a KB's numbers over the last N days (GET …/stats?days=): questions per day, answered
// rate, FAQ hit rate, 👍/👎, LLM calls and tokens, latency p50/p95 — the totals as tiles and each
// per day as an inline SVG chart (chart.js; no chart library). Days without questions are drawn
// as zero (counts) or left out (rates, latency).

import { dailyChart, legend } from "./chart.js";
import { el, int, pct } from "./util.js";
import { appOptions, daysAgo, kbApi, loadInto, query } from "./ownerkit.js";

const RANGES = [7, 30, 90];
const ms = (v) => (typeof v === "number" ? `${int(v)} ms` : "—");
const ratio = (v) => pct(v, 0);

/** The ``days`` days up to today as YYYY-MM-DD, oldest first. */
function dayLabels(days) {
  const out = [];
  const d = new Date(`${daysAgo(days)}T00:00:00`);
  for (let i = 0; i < days; i += 1) {
    const p = (n) => String(n).padStart(2, "0");
    out.push(`${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`);
    d.setDate(d.getDate() + 1);
  }
  return out;
}

function tiles(o) {
  const tokens = (o.prompt_tokens || 0) + (o.completion_tokens || 0);
  const items = [
    ["提问", int(o.questions || 0)],
    ["回答率", ratio(o.answered_rate)],
    ["FAQ 命中率", ratio(o.faq_hit_rate)],
    ["👍 / 👎", `${int(o.up || 0)} / ${int(o.down || 0)}`],
    ["大模型调用", int(o.llm_calls || 0)],
    ["Token", int(tokens)],
    ["延迟 p50", ms(o.latency_p50_ms)],
    ["延迟 p95", ms(o.latency_p95_ms)],
  ];
  return el(
    "dl",
    { class: "stat-tiles", "data-testid": "stat-tiles" },
    items.map(([k, v]) => el("div", { class: "tile" }, el("dt", {}, k), el("dd", {}, v))),
  );
}

function chartCard(title, labels, series, options) {
  return el(
    "figure",
    { class: "chart-card" },
    el("figcaption", {}, title),
    dailyChart(labels, series, { title, ...options }),
    legend(series.map((s) => [s.cls, s.name])),
  );
}

function charts(days, labels) {
  const byDay = new Map((days || []).map((d) => [d.day, d]));
  const col = (key, empty = 0) => labels.map((d) => (byDay.has(d) ? (byDay.get(d)[key] ?? empty) : empty));
  const tokens = labels.map((d) => {
    const t = byDay.get(d);
    return t ? (t.prompt_tokens || 0) + (t.completion_tokens || 0) : 0;
  });
  return el(
    "div",
    { class: "chart-grid", "data-testid": "stat-charts" },
    chartCard(
      "每日提问",
      labels,
      [
        { name: "提问", cls: "s1", values: col("questions") },
        { name: "未答上", cls: "s2", values: col("unanswered") },
      ],
      { kind: "bar", testid: "chart-questions" },
    ),
    chartCard(
      "回答率与 FAQ 命中率",
      labels,
      [
        { name: "回答率", cls: "s1", values: col("answered_rate", null) },
        { name: "FAQ 命中率", cls: "s2", values: col("faq_hit_rate", null) },
      ],
      { max: 1, format: ratio, testid: "chart-rates" },
    ),
    chartCard(
      "👍 / 👎",
      labels,
      [
        { name: "👍", cls: "s1", values: col("up") },
        { name: "👎", cls: "s2", values: col("down") },
      ],
      { kind: "bar", testid: "chart-feedback" },
    ),
    chartCard("大模型调用", labels, [{ name: "调用次数", cls: "s1", values: col("llm_calls") }], {
      kind: "bar",
      testid: "chart-llm",
    }),
    chartCard("Token", labels, [{ name: "Token", cls: "s2", values: tokens }], {
      kind: "bar",
      testid: "chart-tokens",
    }),
    chartCard(
      "延迟",
      labels,
      [
        { name: "p50", cls: "s1", values: col("latency_p50_ms", null) },
        { name: "p95", cls: "s2", values: col("latency_p95_ms", null) },
      ],
      { format: ms, testid: "chart-latency" },
    ),
  );
}

export function createStatsPanel({ kb, app }) {
  const range = el(
    "select",
    { "aria-label": "时间范围", "data-testid": "stats-days" },
    RANGES.map((d) => el("option", { value: String(d), selected: d === 30 }, `最近 ${d} 天`)),
  );
  const appSelect = el("select", { "aria-label": "应用", "data-testid": "stats-app" }, appOptions(app));
  const box = el("div", { class: "stats-body" });
  const refresh = () =>
    loadInto(box, async () => {
      const days = parseInt(range.value, 10) || 30;
      const got = await kbApi(kb, `/stats${query({ days, app: appSelect.value })}`);
      const overall = got.overall || got.totals || {};
      return [tiles(overall), charts(got.days || [], dayLabels(days))];
    });
  for (const control of [range, appSelect]) control.addEventListener("change", refresh);
  refresh();
  return el(
    "section",
    { class: "owner-panel", "data-testid": "owner-stats" },
    el(
      "div",
      { class: "toolbar" },
      range,
      appSelect,
      el("button", { type: "button", class: "ghost small", onclick: refresh }, "刷新"),
    ),
    box,
  );
}
