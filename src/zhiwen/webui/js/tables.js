// The advisor's tool results as small tables: known fields get Chinese labels and units; lists
// of rows (search hits, market groups) become row tables; anything else is shown key: value.

import { el, int, miniTable, money, num } from "./util.js";

const TOOL_NAMES = {
  calc_loan: "房贷计算",
  calc_tax: "税费计算",
  assess_pressure: "还款压力评估",
  search_policy: "法规检索",
  search_faq: "常见问题检索",
  query_market: "挂牌行情",
  query_trend: "楼龄与价格",
  compare_districts: "区域对比",
};

// field → [label, format]; "money" = 元 with 2 decimals
const FIELDS = {
  monthly_payment: ["月供（元）", "money"],
  first_month_payment: ["首月月供（元）", "money"],
  last_month_payment: ["末月月供（元）", "money"],
  monthly_decrease: ["每月递减（元）", "money"],
  price: ["总价（元）", "money"],
  down_payment: ["首付（元）", "money"],
  down_payment_ratio: ["首付比例", "ratio"],
  loan_amount: ["贷款额（元）", "money"],
  years: ["年限（年）", "num"],
  months: ["还款月数", "num"],
  rate: ["年利率（%）", "num"],
  method_name: ["还款方式", "text"],
  total_payment: ["还款总额（元）", "money"],
  total_interest: ["总利息（元）", "money"],
  monthly_income: ["月收入（元）", "money"],
  ratio_percent: ["月供占收入（%）", "num"],
  level_name: ["压力", "text"],
  advice: ["建议", "text"],
  deed_tax: ["契税（元）", "money"],
  vat: ["增值税（元）", "money"],
  income_tax: ["个人所得税（元）", "money"],
  agent_fee: ["中介费（元）", "money"],
  total: ["合计（元）", "money"],
  deed_tax_rate: ["契税税率", "ratio"],
  city: ["城市", "text"],
  district: ["区", "text"],
  count: ["套数", "num"],
  avg_unit_price: ["平均单价（元/㎡）", "int"],
  median_unit_price: ["单价中位数（元/㎡）", "int"],
  highest: ["最高", "text"],
  lowest: ["最低", "text"],
  gap_percent: ["相差（%）", "num"],
  data_note: ["数据说明", "text"],
  avg_total_price: ["平均总价（万）", "num"],
  checked_on: ["规则截至", "text"],
};
const SKIP = new Set([
  "schedule",
  "params",
  "thresholds",
  "method",
  "level",
  "ratio",
  "source",
  "query",
  "kb",
  "notes",
  "advice",
  "checked_on",
]);
const ROW_COLUMNS = {
  title: "标题",
  score: "得分",
  name: "名称",
  district: "区",
  band: "建成年代",
  count: "套数",
  avg_unit_price: "均价（元/㎡）",
  median_unit_price: "中位价（元/㎡）",
  avg_total_price: "均总价（万）",
};

function fmt(value, kind) {
  if (value === null || value === undefined || value === "") return "—";
  if (kind === "money") return typeof value === "number" ? money(value) : String(value);
  if (kind === "int") return typeof value === "number" ? int(value) : String(value);
  if (kind === "ratio") return typeof value === "number" ? `${+(value * 100).toFixed(2)}%` : String(value);
  if (typeof value === "number") return num(value);
  if (typeof value === "boolean") return value ? "是" : "否";
  return String(value);
}

function rowsTable(rows) {
  const cols = Object.keys(rows[0])
    .filter((k) => ROW_COLUMNS[k] && rows.some((r) => r[k] !== null && r[k] !== undefined))
    .slice(0, 5);
  if (!cols.length) return null;
  return miniTable(
    cols.map((c) => ROW_COLUMNS[c]),
    rows.slice(0, 8).map((r) =>
      el(
        "tr",
        {},
        cols.map((c) => el("td", {}, fmt(r[c], FIELDS[c] ? FIELDS[c][1] : ""))),
      ),
    ),
  );
}

function shown(result, k, v) {
  if (SKIP.has(k) || v === null || typeof v === "object" || !FIELDS[k]) return false;
  // 等额本息: first/last month equal the monthly payment and nothing decreases
  if (
    result.method === "equal_payment" &&
    ["first_month_payment", "last_month_payment", "monthly_decrease"].includes(k)
  )
    return false;
  return true;
}

function kvTable(result) {
  const rows = [];
  for (const [k, v] of Object.entries(result)) {
    if (!shown(result, k, v)) continue;
    const [label, kind] = FIELDS[k];
    rows.push(el("tr", { "data-key": k }, el("th", { scope: "row" }, label), el("td", {}, fmt(v, kind))));
  }
  if (result.rule && typeof result.rule === "object") {
    rows.push(
      el(
        "tr",
        { "data-key": "rule" },
        el("th", { scope: "row" }, "规则"),
        el("td", {}, `${result.rule.name}（${result.rule.effective_from} 起）`),
      ),
    );
  }
  return rows.length ? el("table", { class: "mini kv-table" }, el("tbody", {}, rows)) : null;
}

/** One tool call ({name, arguments, result | error}) as a titled small table. */
export function toolTable(call) {
  const title = el("div", { class: "tool-title" }, TOOL_NAMES[call.name] || call.name);
  if (call.error) {
    return el(
      "div",
      { class: "tool", "data-tool": call.name },
      title,
      el("p", { class: "error small" }, call.error.message || "调用失败"),
    );
  }
  const result = call.result || {};
  const parts = [title];
  const kv = kvTable(result);
  if (kv) parts.push(kv);
  for (const [k, v] of Object.entries(result)) {
    if (Array.isArray(v) && v.length && typeof v[0] === "object" && k !== "schedule") {
      const t = rowsTable(v);
      if (t) parts.push(t);
    }
  }
  if (parts.length === 1) parts.push(el("p", { class: "muted small" }, "（无结果）"));
  return el("div", { class: "tool", "data-tool": call.name }, parts);
}
