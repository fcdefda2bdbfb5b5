// 房源: POST /ask of the listings app. Each question gives property cards (data-testid=
// "property-card") and, after them, an editable panel of the constraints the server understood
// (folded on a phone, so the cards come first; its summary says the conditions). /ask takes
// only a question, so "search again" writes the edited constraints back into one Chinese
// question (the rules extractor reads it: "浦东新区，300-500万，2-3室，60-90平，有电梯").
// The conversation's last messages go with each question as ``history``: a refinement
// (「要南北通透的」「预算放宽到700万」「换成普陀」「不限楼层了」) is searched with the constraints
// of every turn merged; the merged request shows as 「理解为：…」 and the block lists the merged
// constraints and what this turn added, replaced or removed. 新对话 starts over, and so does a
// search from the edited constraints form (it states every constraint itself).

import { answerMeta } from "./answermeta.js";
import { userBubble } from "./bubble.js";
import { historyOf, newConversationNote, showUnderstood } from "./conversation.js";
import { renderMarkdown } from "./markdown.js";
import { showSetup } from "./setup.js";
import { $, api, el, emptyNode, errorBox, int } from "./util.js";

const num = (s) => (s === undefined || s === null || s === "" ? null : Number(s));

function parseRange(text, unit) {
  // "300-500万" / "0-500万" / "500万以下" / "500万以上" / "500万左右"
  if (!text) return [null, null];
  let m = new RegExp(`([\\d.]+)\\s*-\\s*([\\d.]+)\\s*${unit}`).exec(text);
  if (m) return [Number(m[1]) || null, Number(m[2])];
  m = new RegExp(`([\\d.]+)\\s*${unit}\\s*(以下|以内|之内)`).exec(text);
  if (m) return [null, Number(m[1])];
  m = new RegExp(`([\\d.]+)\\s*${unit}\\s*以上`).exec(text);
  if (m) return [Number(m[1]), null];
  m = new RegExp(`([\\d.]+)\\s*${unit}`).exec(text);
  return m ? [Number(m[1]) * 0.9, Number(m[1]) * 1.1].map((x) => Math.round(x)) : [null, null];
}

function rangeText(lo, hi, unit) {
  if (lo !== null && hi !== null) return `${lo}-${hi}${unit}`;
  if (hi !== null) return `${hi}${unit}以内`;
  if (lo !== null) return `${lo}${unit}以上`;
  return "";
}

function otherWords(req) {
  const words = [...(req.decoration || []), ...(req.floor || []), ...(req.building_type || [])];
  for (const key of [
    "exclude_decoration",
    "exclude_floor",
    "exclude_building_type",
    "exclude_locations",
    "negations",
  ]) {
    for (const w of req[key] || []) words.push(`不要${w}`);
  }
  if (req.facing_south) words.push("朝南");
  if (req.north_south) words.push("南北通透");
  if (req.build_year_min) words.push(`${req.build_year_min}年以后`);
  words.push(...(req.special_requirements || []));
  return words.join("，");
}

/** The constraints form, prefilled from the server's ``requirements``. */
function constraintsPanel(req, onSearch) {
  const [pLo, pHi] = parseRange(req.price_range, "万");
  const [aLo, aHi] = parseRange(req.area, "㎡");
  const rooms = /(\d+)(?:\s*-\s*(\d+))?室/.exec(req.rooms || "");
  const place =
    [...(req.districts || []), ...(req.bankuai || []), ...(req.estates || [])].join(" ") ||
    req.location ||
    "";
  const field = (label, input) => el("label", { class: "field" }, el("span", {}, label), input);
  const numberInput = (name, value, attrs = {}) =>
    el("input", {
      name,
      type: "number",
      inputmode: "decimal",
      min: "0",
      step: "any",
      value: value ?? "",
      ...attrs,
    });
  const roomSelect = el("select", { name: "rooms" });
  for (const [v, t] of [
    ["", "不限"],
    ["1", "1室"],
    ["2", "2室"],
    ["3", "3室"],
    ["4", "4室"],
    ["2-3", "2-3室"],
    ["3-4", "3-4室"],
  ]) {
    roomSelect.append(el("option", { value: v }, t));
  }
  if (rooms) roomSelect.value = rooms[2] ? `${rooms[1]}-${rooms[2]}` : rooms[1];
  if (rooms && roomSelect.value === "")
    roomSelect.append(el("option", { value: rooms[0], selected: true }, rooms[0]));
  const elevator = el(
    "select",
    { name: "elevator" },
    el("option", { value: "" }, "不限"),
    el("option", { value: "yes" }, "有电梯"),
  );
  if (req.elevator === true) elevator.value = "yes";

  const form = el(
    "form",
    { class: "constraints", "data-testid": "constraints", "aria-label": "找房条件" },
    el("h3", { class: "sub" }, "理解的条件（可修改后重新搜索）"),
    el(
      "div",
      { class: "grid-fields" },
      field(
        "区域 / 板块 / 小区",
        el("input", { name: "place", type: "text", value: place, placeholder: "如 浦东新区 源深" }),
      ),
      field("总价下限（万）", numberInput("price_min", pLo)),
      field("总价上限（万）", numberInput("price_max", pHi)),
      field("户型", roomSelect),
      field("面积下限（㎡）", numberInput("area_min", aLo)),
      field("面积上限（㎡）", numberInput("area_max", aHi)),
      field("电梯", elevator),
      field(
        "其他要求",
        el("input", {
          name: "other",
          type: "text",
          value: otherWords(req),
          placeholder: "如 精装，不要一楼",
        }),
      ),
    ),
    el("div", { class: "row" }, el("button", { type: "submit", class: "primary" }, "按条件重新搜索")),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const parts = [
      String(f.get("place") || "").trim(),
      rangeText(num(f.get("price_min")), num(f.get("price_max")), "万"),
      f.get("rooms") ? `${f.get("rooms")}室`.replace("室室", "室") : "",
      rangeText(num(f.get("area_min")), num(f.get("area_max")), "平"),
      f.get("elevator") === "yes" ? "有电梯" : "",
      String(f.get("other") || "").trim(),
    ].filter(Boolean);
    onSearch(parts.length ? parts.join("，") : "推荐几套房源");
  });
  return form;
}

const WIDE = "(min-width: 641px)";

/** The constraints form in a <details>: open on a wide screen, folded on a phone; its summary
 * says what was understood, so the folded form still shows the conditions. */
function editable(form, data) {
  const understood = data.understood || "";
  return el(
    "details",
    { class: "constraints-box", "data-testid": "constraints-box", open: window.matchMedia(WIDE).matches },
    el(
      "summary",
      {},
      el("strong", {}, "修改条件重新搜索"),
      understood ? el("span", { class: "muted" }, `（${understood}）`) : null,
    ),
    form,
  );
}

// the keys of ``requirements`` as the conversation's changes name them
const REQUIREMENT_LABELS = {
  price_range: "总价",
  unit_price: "单价",
  location: "位置",
  cities: "城市",
  districts: "区",
  bankuai: "板块",
  exclude_locations: "排除区域",
  estates: "小区",
  location_keywords: "地点",
  property_type: "类型",
  area: "面积",
  rooms: "户型",
  halls: "厅",
  elevator: "电梯",
  decoration: "装修",
  exclude_decoration: "排除装修",
  floor: "楼层",
  exclude_floor: "排除楼层",
  building_type: "建筑类型",
  exclude_building_type: "排除建筑类型",
  build_year_min: "建成年份下限",
  build_year_max: "建成年份上限",
  facing_south: "朝南",
  north_south: "南北通透",
  special_requirements: "其他要求",
  negations: "不要",
};

/** The merged constraints of a conversation and what this turn changed (null: a lone question). */
function mergedPanel(data) {
  const conv = data.conversation || {};
  if (!data.understood || !(conv.turns > 1)) return null;
  const label = (k) => REQUIREMENT_LABELS[k] || k;
  const changes = [
    ["新增", conv.added, "ok"],
    ["改为", conv.replaced, "warn"],
    ["取消", conv.removed, "muted"],
  ]
    .filter(([, keys]) => keys && keys.length)
    .map(([verb, keys, kind]) => el("span", { class: `flag ${kind}` }, `${verb}：${keys.map(label).join("、")}`));
  return el(
    "div",
    { class: "merged-constraints", "data-testid": "merged-constraints" },
    el(
      "div",
      {},
      el("strong", {}, conv.fresh_start ? "重新开始的条件：" : `合并 ${conv.turns} 轮后的条件：`),
      el("span", { class: "understood-text" }, data.understood),
    ),
    changes.length ? el("div", { class: "changes" }, changes) : null,
  );
}

function fill(pctValue) {
  const f = el("span");
  f.style.width = `${pctValue}%`; // CSSOM, allowed by the page's CSP (no inline style attributes)
  return f;
}

function card(p) {
  const pctValue = Math.max(0, Math.min(100, p.match_percentage ?? 0));
  const facts = [
    p.area ? `${p.area}㎡` : null,
    p.layout || (p.rooms ? `${p.rooms}室` : null),
    p.floor,
    p.orientation ? `朝${p.orientation.replace(/\s+/g, "")}` : null,
    p.decoration,
    p.elevator === true ? "有电梯" : p.elevator === false ? "无电梯" : null,
    p.build_year ? `${p.build_year}年建` : null,
    p.building_type,
  ].filter(Boolean);
  const where = [p.district, p.bankuai].filter(Boolean).join(" · ") || p.location;
  return el(
    "article",
    { class: `property-card${p.relaxed ? " relaxed" : ""}`, "data-testid": "property-card" },
    el(
      "header",
      {},
      el(
        "div",
        { class: "price" },
        el("strong", {}, p.price !== null && p.price !== undefined ? int(p.price) : "—"),
        el("span", {}, " 万"),
      ),
      el(
        "div",
        { class: "match", title: `匹配度 ${pctValue}%` },
        el("span", { class: "match-n" }, `${pctValue}%`),
        el("span", { class: "match-label" }, "匹配"),
        el("span", { class: "bar", "aria-hidden": "true" }, fill(pctValue)),
      ),
    ),
    el("h3", { class: "title" }, p.title),
    el("p", { class: "where" }, where, p.xiaoqu ? ` · ${p.xiaoqu}` : ""),
    el("p", { class: "facts" }, facts.join(" · ")),
    p.unit_price ? el("p", { class: "muted" }, `单价 ${int(p.unit_price)} 元/㎡`) : null,
    p.match_reasons && p.match_reasons.length
      ? el(
          "ul",
          { class: "reasons" },
          p.match_reasons.map((r) => el("li", {}, r)),
        )
      : null,
    p.relaxed ? el("span", { class: "flag warn" }, "已放宽条件") : null,
  );
}

export function createPropertyView(app) {
  const thread = $("#property-thread");
  const kbSelect = $("#property-kb");
  const count = $("#property-count");
  let turns = []; // this conversation: [{question, answer, standalone}]

  function fillKbs() {
    const keep = kbSelect.value;
    emptyNode(kbSelect);
    const kbs = app.kbs.filter((k) => k.app === "listings");
    for (const kb of kbs) kbSelect.append(el("option", { value: kb.name }, kb.name));
    if (!kbs.length) kbSelect.append(el("option", { value: "" }, "（没有房源库）"));
    if (keep && kbs.some((k) => k.name === keep)) kbSelect.value = keep;
    // any KB of the listings app will do (a city of one's own): the notice only when there is none
    showSetup($("#view-property"), app, kbs.length ? [] : ["listings"]);
  }

  /** ``fresh``: the question states every constraint (the form), so the conversation starts at it. */
  async function ask(question, { fresh = false } = {}) {
    if (fresh) turns = [];
    const prior = turns.slice();
    thread.querySelector(".empty")?.remove();
    const block = el("section", { class: "result-block", "aria-label": `找房：${question}` });
    const user = userBubble(question);
    thread.append(user, block);
    block.scrollIntoView({ block: "start" });
    block.append(el("div", { class: "typing" }, "正在搜索房源"));
    block.dataset.busy = "true";
    try {
      const body = { question, max_results: parseInt(count.value, 10) || 5, kb: kbSelect.value || "listings" };
      const history = historyOf(prior);
      if (history.length) body.history = history;
      const data = await api("/ask", { body, signal: app.signal() });
      emptyNode(block);
      showUnderstood(user, question, data.standalone_question);
      const props = data.retrieved_properties || [];
      const total = typeof data.total_matches === "number" ? data.total_matches : null;
      const found = total !== null && total > props.length ? `符合条件 ${total} 套，列出 ${props.length} 套` : `找到 ${props.length} 套房源`;
      const head = el(
        "div",
        { class: "result-head" },
        el("strong", {}, props.length ? found : "没有找到符合条件的房源"),
        data.relaxed && data.relaxed.length
          ? el("span", { class: "flag warn" }, `已放宽：${data.relaxed.join("、")}`)
          : null,
        el(
          "span",
          { class: `flag ${data.llm_used ? "ok" : "warn"}` },
          data.llm_used ? "大模型生成" : "规则整理",
        ),
      );
      const answer = el(
        "details",
        { class: "answer-text" },
        el("summary", {}, "文字回答"),
        el("div", { class: "md" }, renderMarkdown(data.answer)),
      );
      const form = constraintsPanel(data.requirements || {}, (q) => app.run(() => ask(q, { fresh: true })));
      // the results first, then the constraints to edit: folded on a phone, where the form
      // would fill the screen before the first card
      const cards = el("div", { class: "cards" }, props.map(card));
      const meta = answerMeta(data, { onAsk: app.ask });
      block.append(
        ...[head, meta.top, mergedPanel(data), cards, editable(form, data), answer, meta.bottom].filter(Boolean),
      );
      if (thread.contains(block))
        turns.push({ question, answer: data.answer || "", standalone: data.standalone_question || null });
    } catch (err) {
      emptyNode(block).append(
        err.name === "AbortError" ? el("p", { class: "muted" }, "已停止") : errorBox(err),
      );
    } finally {
      block.dataset.busy = "false";
    }
  }

  // 新对话: forget the conversation (what is sent as history) and clear the thread
  $("#property-new").addEventListener("click", () => {
    if (app.running) app.controller?.abort();
    turns = [];
    emptyNode(thread).append(newConversationNote("已开始新对话：之后的条件不再与前面的合并。"));
    $("#chat-input").focus();
  });

  return {
    name: "property",
    placeholder: "如：浦东 500万以内两房，要电梯",
    shortPlaceholder: "如：浦东500万内两房",
    init() {
      fillKbs();
      emptyNode(thread).append(
        el(
          "div",
          { class: "empty" },
          el("p", {}, "说出预算、区域、户型、面积等要求，系统给出匹配的房源卡片；条件可以修改后重新搜索。"),
          el(
            "p",
            { class: "muted" },
            "可以接着补充或修改条件，如「要南北通透的」「预算放宽到700万」「换成普陀」「不限楼层了」；点「新对话」重新开始。",
          ),
        ),
      );
    },
    refreshKbs: fillKbs,
    ask,
    busyNode: thread,
  };
}
