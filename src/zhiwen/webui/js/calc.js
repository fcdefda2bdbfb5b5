// 计算器: the loan calculator (POST /api/v1/calc/loan, both methods at once, monthly schedule
// chart) and the tax calculator (POST /api/v1/calc/tax: each part, the rule and its date).
// Empty or non-numeric input is caught here; range errors come back from the server, and its
// Chinese message is shown next to the field it names.

import { legend, loanChart } from "./chart.js";
import { dateField, isoDate } from "./datefield.js";
import { $, ApiError, api, busy, el, emptyNode, errorBox, miniTable, money } from "./util.js";

function fieldError(form, name, message) {
  const input = form.elements[name];
  const slot = $(`[data-error-for="${name}"]`, form);
  if (input) {
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }
  if (slot) slot.replaceChildren(el("span", { role: "alert", "data-testid": "error" }, message));
  return Boolean(slot);
}

function clearErrors(form) {
  for (const n of form.querySelectorAll("[aria-invalid]")) n.removeAttribute("aria-invalid");
  for (const n of form.querySelectorAll("[data-error-for]")) emptyNode(n);
}

/** Read a number field; '' → null; not a number → a local error. */
function numberOf(form, name, label, { required = true } = {}) {
  const raw = String(form.elements[name].value).trim().replace(/,/g, "");
  if (!raw) {
    if (required) throw Object.assign(new ApiError(`请填写${label}`), { localField: name });
    return null;
  }
  const v = Number(raw);
  if (!isFinite(v)) throw Object.assign(new ApiError(`${label}应为数字`), { localField: name });
  // the field's own unit and range (a percent box takes 30 for 30%), checked before any request
  const { min, max } = form.elements[name];
  if ((min !== "" && v < Number(min)) || (max !== "" && v > Number(max)))
    throw Object.assign(new ApiError(`${label}应在 ${min || "—"} ~ ${max || "—"} 之间`), { localField: name });
  return v;
}

function showError(form, out, err, fieldMap) {
  const name = err.localField || fieldMap[err.field] || null;
  const range = name && form.elements[name] ? rangeHint(form.elements[name]) : "";
  const shown =
    name && fieldError(form, name, `${err.message}${err.code ? `（错误码 ${err.code}）` : ""}${range}`);
  if (!shown) out.replaceChildren(errorBox(err));
}

function rangeHint(input) {
  const { min, max } = input;
  if (min === "" && max === "") return "";
  return `；允许范围：${min || "—"} ~ ${max || "—"}`;
}

// -- loan -----------------------------------------------------------------------------------
const LOAN_FIELDS = {
  price: "price",
  down_payment_ratio: "down_pct",
  years: "years",
  rate: "rate",
  method: "method",
};

function summaryRows(a, b) {
  const row = (label, f) =>
    el("tr", {}, el("th", { scope: "row" }, label), el("td", {}, f(a)), el("td", {}, f(b)));
  return el(
    "table",
    { class: "mini compare" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", {}, ""),
        el("th", { scope: "col" }, a.method_name),
        el("th", { scope: "col" }, b.method_name),
      ),
    ),
    el(
      "tbody",
      {},
      row("首月月供（元）", (r) => money(r.first_month_payment)),
      row("末月月供（元）", (r) => money(r.last_month_payment)),
      row("每月递减（元）", (r) => money(r.monthly_decrease)),
      row("还款总额（元）", (r) => money(r.total_payment)),
      row("总利息（元）", (r) => money(r.total_interest)),
    ),
  );
}

function yearlyTable(rows) {
  const years = [];
  for (let i = 0; i < rows.length; i += 12) {
    const part = rows.slice(i, i + 12);
    const sum = (k) => part.reduce((s, r) => s + r[k], 0);
    years.push(
      el(
        "tr",
        {},
        el("td", {}, `第 ${i / 12 + 1} 年`),
        el("td", {}, money(sum("payment"))),
        el("td", {}, money(sum("principal"))),
        el("td", {}, money(sum("interest"))),
        el("td", {}, money(part[part.length - 1].remaining)),
      ),
    );
  }
  return el(
    "details",
    { class: "schedule" },
    el("summary", {}, "按年还款计划"),
    miniTable(["年份", "还款（元）", "本金（元）", "利息（元）", "剩余本金（元）"], years),
  );
}

async function submitLoan(form, out) {
  clearErrors(form);
  let body;
  try {
    body = {
      price: numberOf(form, "price", "房价"),
      down_payment_ratio: numberOf(form, "down_pct", "首付比例") / 100,
      years: numberOf(form, "years", "贷款年限"),
      rate: numberOf(form, "rate", "年利率"),
    };
  } catch (err) {
    showError(form, out, err, LOAN_FIELDS);
    return;
  }
  const method = form.elements.method.value;
  await busy([form, out], async () => {
    try {
      const [ep, epr] = await Promise.all([
        api("/api/v1/calc/loan", { body: { ...body, method: "equal_payment", schedule: "monthly" } }),
        api("/api/v1/calc/loan", { body: { ...body, method: "equal_principal", schedule: "monthly" } }),
      ]);
      const chosen = method === "equal_principal" ? epr : ep;
      emptyNode(out).append(
        el(
          "div",
          { class: "big-number" },
          el(
            "span",
            { class: "label" },
            method === "equal_principal" ? "首月月供（等额本金）" : "月供（等额本息）",
          ),
          el(
            "output",
            { "data-testid": "calc-loan-monthly", for: "loan-price loan-down loan-years loan-rate" },
            money(chosen.monthly_payment),
          ),
          el("span", { class: "unit" }, "元"),
        ),
        el(
          "p",
          { class: "muted" },
          `首付 ${money(chosen.down_payment)} 元 · 贷款 ${money(chosen.loan_amount)} 元 · ${chosen.months} 个月`,
        ),
        el("div", { class: "table-wrap" }, summaryRows(ep, epr)),
        el(
          "figure",
          { class: "chart-box" },
          loanChart(
            [
              { name: "等额本息", cls: "s1", rows: ep.schedule },
              { name: "等额本金", cls: "s2", rows: epr.schedule },
            ],
            { area: { rows: chosen.schedule } },
          ),
          legend([
            ["s1", "等额本息 月供"],
            ["s2", "等额本金 月供"],
            ["area", `${chosen.method_name} 其中利息`],
          ]),
        ),
        yearlyTable(chosen.schedule),
      );
      const shaded = out.querySelector(".area-interest");
      if (shaded) shaded.dataset.rows = String(chosen.schedule.length);
    } catch (err) {
      emptyNode(out);
      showError(form, out, err, LOAN_FIELDS);
    }
  });
}

// -- tax ------------------------------------------------------------------------------------
const TAX_FIELDS = {
  price: "price",
  area: "area",
  house_age_years: "house_age_years",
  original_price: "original_price",
  agent_fee_rate: "agent_fee_rate",
  city: "city",
  as_of: "as_of",
};

async function submitTax(form, out) {
  clearErrors(form);
  let body;
  try {
    body = {
      price: numberOf(form, "price", "成交价"),
      area: numberOf(form, "area", "面积"),
      house_age_years: numberOf(form, "house_age_years", "卖方持有年限"),
      is_first_home: form.elements.is_first_home.checked,
      is_only_home: form.elements.is_only_home.checked,
    };
    const original = numberOf(form, "original_price", "原购入价", { required: false });
    if (original !== null) body.original_price = original;
    const fee = numberOf(form, "agent_fee_rate", "中介费率", { required: false });
    if (fee !== null) body.agent_fee_rate = fee / 100;
    const city = form.elements.city.value.trim();
    if (city) body.city = city;
    const asOf = isoDate(form.elements.as_of.value);
    if (asOf === null)
      throw Object.assign(new ApiError("交易日期格式应为 2026年06月01日 或 2026-06-01"), { localField: "as_of" });
    if (asOf) body.as_of = asOf;
  } catch (err) {
    showError(form, out, err, TAX_FIELDS);
    return;
  }
  await busy([form, out], async () => {
    try {
      const r = await api("/api/v1/calc/tax", { body });
      const row = (label, value, note = "") =>
        el(
          "tr",
          {},
          el("th", { scope: "row" }, label),
          el("td", { class: "num" }, money(value)),
          el("td", { class: "muted" }, note),
        );
      emptyNode(out).append(
        el(
          "div",
          { class: "big-number" },
          el("span", { class: "label" }, "税费合计"),
          el("output", { "data-testid": "calc-tax-total" }, money(r.total)),
          el("span", { class: "unit" }, "元"),
        ),
        el(
          "div",
          { class: "table-wrap" },
          el(
            "table",
            { class: "mini tax-parts" },
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                el("th", { scope: "col" }, "项目"),
                el("th", { scope: "col" }, "金额（元）"),
                el("th", { scope: "col" }, "说明"),
              ),
            ),
            el(
              "tbody",
              {},
              row("契税", r.deed_tax, `税率 ${+(r.deed_tax_rate * 100).toFixed(2)}%`),
              row("增值税", r.vat),
              row("个人所得税", r.income_tax),
              row("中介费", r.agent_fee, `费率 ${+(r.agent_fee_rate * 100).toFixed(2)}%`),
              row("合计", r.total),
            ),
          ),
        ),
        el(
          "dl",
          { class: "kv" },
          el("dt", {}, "契税规则"),
          el("dd", {}, `${r.rule.name}（${r.rule.id}）`),
          el("dt", {}, "依据"),
          el("dd", {}, r.rule.source),
          el("dt", {}, "执行日期"),
          el("dd", {}, `${r.rule.effective_from} 起`),
          el("dt", {}, "规则数据截至"),
          el("dd", {}, r.checked_on),
        ),
        r.notes && r.notes.length
          ? el(
              "ul",
              { class: "notes" },
              r.notes.map((n) => el("li", {}, n)),
            )
          : null,
      );
    } catch (err) {
      emptyNode(out);
      showError(form, out, err, TAX_FIELDS);
    }
  });
}

export function createCalcView() {
  const loan = $("#loan-form");
  const tax = $("#tax-form");
  dateField(tax.elements.as_of);
  loan.addEventListener("submit", (e) => {
    e.preventDefault();
    submitLoan(loan, $("#loan-result"));
  });
  tax.addEventListener("submit", (e) => {
    e.preventDefault();
    submitTax(tax, $("#tax-result"));
  });
  return { name: "calc", init() {}, placeholder: "" };
}
