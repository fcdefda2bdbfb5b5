// 管理设置: the runtime settings behind the admin token (GET/PUT/DELETE /admin/settings).
// The token stays in sessionStorage (gone when the tab closes). The form is built from the
// settings themselves: a checkbox for a boolean, a number box for a number, text otherwise;
// saving sends only the fields that changed.

import { $, api, busy, el, emptyNode, errorBox, toast } from "./util.js";

const TOKEN_KEY = "zhiwen.admin.token";
const SECTIONS = { retrieval: "检索", rerank: "重排序", adaptive: "自适应" };
const LABELS = {
  default_mode: "默认检索模式",
  fusion: "融合方式",
  rrf_k: "RRF k",
  dense_alpha: "向量权重 α",
  bm25_weight: "BM25 权重",
  dense_weight: "向量权重",
  candidates: "候选数",
  top_k: "返回条数",
  enabled: "启用",
  backend: "后端",
  model: "模型",
  device: "设备",
  endpoint: "服务地址",
  batch_size: "批大小",
  score_threshold: "分数阈值",
  fallback: "低于阈值时保留条数",
  timeout_s: "超时（秒）",
  mmr_enabled: "启用 MMR",
  mmr_lambda: "MMR λ",
  dynamic_lambda_enabled: "动态 λ",
  dynamic_threshold_enabled: "动态阈值",
  min_similarity: "最低相似度",
  threshold_delta: "阈值调整量",
  lambda_delta: "λ 调整量",
  per_doc_limit: "每篇文档最多条数",
  keywords_profile: "关键词画像（JSON）",
};

function headers() {
  const token = sessionStorage.getItem(TOKEN_KEY) || "";
  return token ? { Authorization: `Bearer ${token}` } : {};
}

function input(section, key, value) {
  const name = `${section}.${key}`;
  const id = `admin-${section}-${key}`;
  let control;
  if (typeof value === "boolean") control = el("input", { id, name, type: "checkbox", checked: value });
  else if (typeof value === "number") control = el("input", { id, name, type: "number", step: "any", value });
  else if (value !== null && typeof value === "object") {
    control = el("textarea", { id, name, rows: "2" });
    control.value = JSON.stringify(value);
  } else
    control = el("input", {
      id,
      name,
      type: "text",
      value: value ?? "",
      placeholder: value === null ? "（未设置）" : "",
    });
  control.dataset.kind = value === null ? "null" : Array.isArray(value) ? "json" : typeof value;
  control.dataset.original = JSON.stringify(value);
  const wrap = el("div", { class: `field${typeof value === "boolean" ? " check" : ""}` });
  wrap.append(
    el("label", { for: id }, LABELS[key] || key),
    control,
    el("div", { class: "field-error", "data-error-for": name }),
  );
  return wrap;
}

function valueOf(control) {
  const kind = control.dataset.kind;
  if (control.type === "checkbox") return control.checked;
  if (kind === "number") return control.value === "" ? null : Number(control.value);
  if (kind === "object" || kind === "json") return JSON.parse(control.value || "null");
  return control.value === "" ? null : control.value;
}

export function createAdminView() {
  const form = $("#admin-form");
  const fields = $("#admin-fields");
  const out = $("#admin-status");
  const token = $("#admin-token");
  token.value = sessionStorage.getItem(TOKEN_KEY) || "";

  function render(data) {
    emptyNode(fields);
    for (const [section, values] of Object.entries(data.settings)) {
      const overridden = data.overrides[section] || {};
      const set = el(
        "fieldset",
        { class: "settings-section" },
        el("legend", {}, SECTIONS[section] || section),
      );
      for (const [key, value] of Object.entries(values)) {
        const f = input(section, key, value);
        if (key in overridden) f.classList.add("overridden");
        set.append(f);
      }
      fields.append(set);
    }
    fields.append(
      el(
        "div",
        { class: "row" },
        el("button", { type: "submit", class: "primary", name: "save" }, "保存修改"),
        el("button", { type: "button", class: "ghost", onclick: reset }, "恢复默认"),
        el("span", { class: "muted small" }, `保存位置：${data.path}`),
      ),
    );
  }

  async function load() {
    sessionStorage.setItem(TOKEN_KEY, token.value.trim());
    emptyNode(out);
    await busy(form, async () => {
      try {
        render(await api("/admin/settings", { headers: headers() }));
      } catch (err) {
        emptyNode(fields);
        out.append(errorBox(err));
      }
    });
  }

  async function save() {
    emptyNode(out);
    const patch = {};
    for (const control of fields.querySelectorAll("[data-original]")) {
      let value;
      try {
        value = valueOf(control);
      } catch {
        out.append(errorBox(new Error(`「${control.name}」不是合法的 JSON`)));
        return;
      }
      if (JSON.stringify(value) === control.dataset.original) continue;
      const [section, key] = control.name.split(".");
      (patch[section] ||= {})[key] = value;
    }
    if (!Object.keys(patch).length) return toast("没有修改");
    await busy(form, async () => {
      try {
        const data = await api("/admin/settings", { method: "PUT", body: patch, headers: headers() });
        render(data);
        toast("设置已更新，下一次请求生效", "ok");
      } catch (err) {
        out.append(errorBox(err));
      }
    });
  }

  async function reset() {
    emptyNode(out);
    await busy(form, async () => {
      try {
        render(await api("/admin/settings", { method: "DELETE", headers: headers() }));
        toast("已恢复默认设置", "ok");
      } catch (err) {
        out.append(errorBox(err));
      }
    });
  }

  $("#admin-auth").addEventListener("submit", (e) => {
    e.preventDefault();
    load();
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    save();
  });
  return { load };
}
