// 知问 web UI: plain JS, no build step. Every API answer is {code, message, data}
// (the listings /ask answer carries its fields next to code/message, seed 000).
"use strict";

const $ = (id) => document.getElementById(id);
const state = { kbs: [], config: { endpoints: {} } };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === "") continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

function fmt(x, digits = 3) {
  return typeof x === "number" ? x.toFixed(digits) : "—";
}

function showStatus(text, kind = "") {
  const s = $("status");
  s.hidden = !text;
  s.textContent = text || "";
  s.className = "status" + (kind ? " " + kind : "");
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new Error("无法连接服务：" + e.message);
  }
  let json;
  try {
    json = await resp.json();
  } catch (e) {
    throw new Error(`服务返回了非 JSON 响应（HTTP ${resp.status}）`);
  }
  if (!resp.ok || json.code !== 0) {
    const err = new Error(`${json.message || "请求失败"}（错误码 ${json.code ?? resp.status}）`);
    err.envelope = json;
    throw err;
  }
  return json;
}

function currentKb() {
  return state.kbs.find((k) => k.name === $("kb").value) || null;
}

function updateForm() {
  const kb = currentKb();
  const action = $("action").value;
  $("mode-wrap").hidden = action !== "search";
  const bits = [];
  if (kb) {
    bits.push(kb.app ? `应用：${kb.app}` : "通用问答");
    if (kb.info && typeof kb.info.documents === "number") bits.push(`${kb.info.documents} 篇文档`);
    if (kb.info && typeof kb.info.chunks === "number") bits.push(`${kb.info.chunks} 个片段`);
    if (kb.embedder) bits.push(`向量模型：${kb.embedder}`);
    if (kb.error) bits.push(`⚠ ${kb.error}`);
  }
  bits.push(state.config.llm_configured ? "已配置大模型" : "未配置大模型（提取式回答）");
  $("kb-info").textContent = bits.join(" · ");
  if (kb && kb.app === "listings") $("question").placeholder = "例如：浦东 800 万以内的两房，要有电梯";
  else if (kb && kb.app === "recipes") $("question").placeholder = "例如：宫保鸡丁怎么做？";
  else $("question").placeholder = "输入问题，例如：如何创建一个知识库？";
}

async function loadKbs() {
  try {
    const [cfg, list] = await Promise.all([api("/api/v1/ui-config"), api("/api/v1/kbs")]);
    state.config = cfg.data;
    state.kbs = list.data.kbs;
  } catch (e) {
    showStatus(e.message, "error");
    return;
  }
  const select = $("kb");
  select.innerHTML = "";
  if (!state.kbs.length) {
    select.append(el("option", { value: "" }, "（没有知识库）"));
    showStatus("还没有知识库：运行 zhiwen demo，或 zhiwen index 创建一个。", "warn");
  }
  for (const kb of state.kbs) {
    select.append(el("option", { value: kb.name }, kb.app ? `${kb.name}（${kb.app}）` : kb.name));
  }
  const preferred = state.kbs.find((k) => k.name === "demo");
  if (preferred) select.value = preferred.name;
  updateForm();
}

function resetOutput() {
  for (const id of ["answer-box", "meta-box", "sources-box"]) $(id).hidden = true;
  $("answer").textContent = "";
  $("answer-flags").innerHTML = "";
  $("sources").innerHTML = "";
  $("meta").textContent = "";
}

function metaLine(metadata, skip = []) {
  const wrap = el("div", { class: "meta" });
  for (const [k, v] of Object.entries(metadata || {})) {
    if (skip.includes(k) || v === null || v === "" || typeof v === "object") continue;
    wrap.append(el("span", {}, `${k}: ${v}`));
  }
  return wrap;
}

function showAnswer(text, llmUsed, reason) {
  $("answer-box").hidden = false;
  $("answer").textContent = text || "（没有回答）";
  const flags = $("answer-flags");
  flags.append(
    llmUsed
      ? el("span", { class: "flag llm" }, "大模型生成")
      : el("span", { class: "flag extractive" }, "提取式回答" + (reason ? `：${reason}` : ""))
  );
}

function renderQa(data) {
  showAnswer(data.answer, data.llm_used, data.extractive_reason);
  const sources = data.sources || [];
  if (!sources.length) return;
  $("sources-box").hidden = false;
  $("sources-title").textContent = `来源（${sources.length}）`;
  for (const s of sources) {
    $("sources").append(
      el("li", {},
        el("div", { class: "title" }, s.title || s.id),
        el("div", { class: "scores" }, `${s.kb ? s.kb + " · " : ""}${s.id}  score=${fmt(s.score)}`),
        metaLine(s.metadata)
      )
    );
  }
}

function renderListings(body) {
  showAnswer(body.answer, body.llm_used, body.llm_used ? null : "未使用大模型");
  const props = body.retrieved_properties || [];
  const bits = [];
  if (body.requirements) bits.push("理解的需求：" + JSON.stringify(body.requirements));
  if (body.relaxed && body.relaxed.length) bits.push("已放宽：" + body.relaxed.join("、"));
  if (bits.length) {
    $("meta-box").hidden = false;
    $("meta").textContent = bits.join("  ");
  }
  if (!props.length) return;
  $("sources-box").hidden = false;
  $("sources-title").textContent = `房源（${props.length}）`;
  for (const p of props) {
    $("sources").append(
      el("li", {},
        el("div", { class: "title" }, `${p.title}  ${p.price ?? "?"} 万`),
        el("div", {}, [p.location, p.layout, p.area ? `${p.area}㎡` : "", p.floor].filter(Boolean).join(" · ")),
        el("div", { class: "scores" }, `匹配度 ${p.match_percentage ?? "—"}%`),
        el("div", { class: "reasons" }, (p.match_reasons || []).join("；")),
        metaLine(p, ["title", "location", "price", "layout", "area", "floor", "match_reasons",
          "match_percentage", "match_score", "id"])
      )
    );
  }
}

function renderSearch(data) {
  const p = data.params || {};
  const d = data.diagnostics || {};
  const bits = [
    `意图：${data.intent}`,
    `融合：${p.fusion}（rrf_k=${p.rrf_k}）`,
    `MMR：${p.mmr_enabled ? "开 λ=" + p.mmr_lambda : "关"}`,
    `重排：${p.rerank && p.rerank.enabled ? "开" : "关"}`,
  ];
  if (p.thresholds) bits.push(`阈值：相似度 ${p.thresholds.similarity} / 重排 ${p.thresholds.rerank}`);
  if (d.timings_ms) bits.push("耗时：" + Object.entries(d.timings_ms).map(([k, v]) => `${k} ${v}ms`).join("，"));
  $("meta-box").hidden = false;
  $("meta").textContent = bits.join("  ·  ");
  if (data.message) showStatus(data.message, "warn");
  const results = data.results || [];
  $("sources-box").hidden = false;
  $("sources-title").textContent = `检索结果（${results.length}）`;
  for (const r of results) {
    const scores = [`fused=${fmt(r.fused_score)}`, `vector=${fmt(r.vector_score)}`, `bm25=${fmt(r.bm25_score)}`];
    if (r.rerank_score !== null && r.rerank_score !== undefined) scores.push(`rerank=${fmt(r.rerank_score)}`);
    $("sources").append(
      el("li", {},
        el("div", { class: "title" }, r.title || r.doc_id),
        el("div", { class: "scores" }, scores.join("  ") + `  ${r.chunk_id}`),
        el("div", { class: "text" }, r.text),
        metaLine(r.metadata)
      )
    );
  }
}

async function submit(ev) {
  ev.preventDefault();
  const kb = currentKb();
  const question = $("question").value.trim();
  if (!kb || !question) return;
  const topK = parseInt($("top_k").value, 10) || 5;
  const action = $("action").value;
  resetOutput();
  showStatus("正在检索……");
  $("submit").disabled = true;
  try {
    if (action === "search") {
      const body = { kb: kb.name, query: question, top_k: topK };
      if ($("mode").value) body.mode = $("mode").value;
      const res = await api("/knowledge-base/search", body);
      showStatus("");
      renderSearch(res.data);
    } else if (kb.app === "listings" && state.config.endpoints.ask) {
      const res = await api("/ask", { kb: kb.name, question, max_results: topK });
      showStatus("");
      renderListings(res.data || res);
    } else if (state.config.endpoints.qa) {
      const res = await api("/api/v1/qa", { kb: kb.name, question, top_k: topK });
      showStatus("");
      renderQa(res.data);
    } else {
      // no QA app mounted: fall back to raw search
      const res = await api("/knowledge-base/search", { kb: kb.name, query: question, top_k: topK });
      showStatus("问答接口不可用，已显示检索结果。", "warn");
      renderSearch(res.data);
    }
  } catch (e) {
    showStatus(e.message, "error");
  } finally {
    $("submit").disabled = false;
  }
}

$("ask-form").addEventListener("submit", submit);
$("kb").addEventListener("change", updateForm);
$("action").addEventListener("change", updateForm);
$("question").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("ask-form").requestSubmit();
});
loadKbs();
