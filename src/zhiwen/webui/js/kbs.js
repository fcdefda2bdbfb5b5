// 知识库: list and inspect KBs (GET /api/v1/kbs[/{kb}], /documents), upload files or a whole
// folder (POST /api/v1/kbs/{kb}/documents, then GET /api/v1/jobs/{id} until it ends: live
// per-file progress), delete a document or a whole KB (two clicks, no browser confirm()); each
// KB's 「管理」 opens its owner's area (owner.js); 「导入知识库」 loads an exported bundle
// (kbimport.js).

import { askForKey, authHeaders } from "./auth.js";
import { createImportForm } from "./kbimport.js";
import { ownerHash } from "./owner.js";
import {
  $,
  ApiError,
  api,
  busy,
  deleteButton,
  el,
  emptyNode,
  errorBox,
  errorFrom,
  int,
  toast,
} from "./util.js";

const FILE_STATUS = {
  queued: "排队中",
  parsing: "解析中",
  indexing: "索引中",
  indexed: "已导入",
  skipped: "未变化，已跳过",
  failed: "失败",
  processing: "处理中",
};
const JOB_STATUS = { queued: "排队中", running: "导入中", done: "完成", partial: "部分失败", failed: "失败" };
const DONE = new Set(["done", "partial", "failed"]);

function bytes(n) {
  if (typeof n !== "number") return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 ** 2).toFixed(1)} MB`;
}

/** multipart upload with XHR (fetch has no upload progress); resolves to the job. A 401 asks
 * for the API key (auth.js) and sends the files again once one is entered. */
async function uploadFiles(kb, files, ocr, onProgress) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await uploadOnce(kb, files, ocr, onProgress);
    } catch (err) {
      if (err.status !== 401 || attempt >= 2 || !(await askForKey(err.message))) throw err;
    }
  }
}

function uploadOnce(kb, files, ocr, onProgress) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const f of files) form.append("files", f, f.webkitRelativePath || f.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/v1/kbs/${encodeURIComponent(kb)}/documents${ocr ? `?ocr=${ocr}` : ""}`);
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError("上传失败：无法连接服务"));
    xhr.onload = async () => {
      const resp = new Response(xhr.responseText, {
        status: xhr.status,
        headers: { "Content-Type": "application/json" },
      });
      if (xhr.status < 200 || xhr.status >= 300) return reject(await errorFrom(resp));
      try {
        const body = JSON.parse(xhr.responseText);
        if (body.code !== 0) return reject(new ApiError(body.message, { code: body.code, data: body.data }));
        resolve(body.data);
      } catch {
        reject(new ApiError(`服务返回了非 JSON 响应（HTTP ${xhr.status}）`));
      }
    };
    xhr.send(form);
  });
}

function jobTable(job) {
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      { class: "mini job-files" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ["文件", "状态", "类型", "页数", "片段", "说明"].map((h) => el("th", { scope: "col" }, h)),
        ),
      ),
      el(
        "tbody",
        {},
        job.files.map((f) =>
          el(
            "tr",
            { "data-status": f.status },
            el("td", {}, f.name),
            el("td", {}, el("span", { class: `status s-${f.status}` }, FILE_STATUS[f.status] || f.status)),
            el("td", {}, f.type || "—"),
            el(
              "td",
              {},
              f.pages
                ? f.ocr_pages
                  ? `${f.pages}（OCR ${f.pages_done}/${f.ocr_pages}）`
                  : String(f.pages)
                : "—",
            ),
            el("td", {}, f.chunks ?? "—"),
            el("td", { class: f.status === "failed" ? "error small" : "muted" }, f.error || ""),
          ),
        ),
      ),
    ),
  );
}

/** 「管理」: the KB's owner area (片段、FAQ、词典、提问记录、统计). */
function manageLink(name) {
  return el(
    "a",
    {
      href: ownerHash(name),
      class: "ghost small manage",
      "data-testid": "kb-manage",
      "aria-label": `管理知识库 ${name}`,
      title: "片段、FAQ、词典与同义词、修改记录、提问记录、统计",
    },
    "管理",
  );
}

export function createKbView(app) {
  const list = $("#kb-list");
  const detail = $("#kb-detail");
  const upForm = $("#upload-form");
  const upOut = $("#upload-progress");
  $("#kb-import").replaceChildren(createImportForm(app));

  function renderList() {
    emptyNode(list);
    if (!app.kbs.length) {
      list.append(el("p", { class: "muted" }, "还没有知识库。在右侧上传文件即可新建，或运行 zhiwen demo。"));
      return;
    }
    for (const kb of app.kbs) {
      const info = kb.info || {};
      list.append(
        el(
          "li",
          { class: "kb-item", "data-kb": kb.name },
          el(
            "button",
            {
              type: "button",
              class: "kb-open",
              "aria-label": `查看知识库 ${kb.name}`,
              onclick: () => app.run(() => inspect(kb.name), detail),
            },
            el("strong", {}, kb.name),
            el("span", { class: "muted" }, kb.app ? app.appTitle(kb.app) : "通用"),
            el(
              "span",
              { class: "muted small" },
              kb.error
                ? `⚠ ${kb.error}`
                : `${int(info.documents)} 篇 · ${int(info.chunks)} 段 · ${kb.embedder || "—"}`,
            ),
          ),
          manageLink(kb.name),
        ),
      );
    }
    const names = $("#kb-names");
    emptyNode(names).append(...app.kbs.map((k) => el("option", { value: k.name })));
  }

  async function inspect(name) {
    emptyNode(detail).append(el("p", { class: "typing" }, `正在读取 ${name}`));
    try {
      const [kb, docs] = await Promise.all([
        api(`/api/v1/kbs/${encodeURIComponent(name)}`),
        api(`/api/v1/kbs/${encodeURIComponent(name)}/documents`),
      ]);
      const info = kb.info || {};
      const store = info.store || {};
      const rows = [
        ["应用", kb.app ? app.appTitle(kb.app) : "通用问答"],
        ["向量模型", `${kb.embedder || "—"}${info.dim ? `（${info.dim} 维）` : ""}`],
        ["文档 / 片段", `${int(info.documents)} / ${int(info.chunks)}`],
        ["存储", `${store.backend || "—"} · ${bytes(store.bytes)}`],
        ["版本", info.revision ?? "—"],
      ];
      const table = el(
        "table",
        { class: "mini docs" },
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            ["文档", "类型", "页数", "片段", "状态", ""].map((h) => el("th", { scope: "col" }, h)),
          ),
        ),
        el(
          "tbody",
          {},
          docs.documents.map((d) =>
            el(
              "tr",
              { "data-doc": d.doc_id },
              el(
                "td",
                {},
                d.title || d.doc_id,
                d.error ? el("div", { class: "error small" }, d.error) : null,
              ),
              el("td", {}, d.type || "—"),
              el("td", {}, d.pages ?? "—"),
              el("td", {}, d.chunks ?? "—"),
              el("td", {}, el("span", { class: `status s-${d.status}` }, FILE_STATUS[d.status] || d.status)),
              el(
                "td",
                {},
                deleteButton("删除", async (b) => {
                  await busy(b, async () => {
                    try {
                      const r = await api(
                        `/api/v1/kbs/${encodeURIComponent(name)}/documents/${encodeURIComponent(d.doc_id)}`,
                        { method: "DELETE" },
                      );
                      toast(`已删除 ${d.doc_id}（${r.chunks_removed} 个片段）`, "ok");
                      await app.reloadKbs();
                      await inspect(name);
                    } catch (err) {
                      b.replaceWith(errorBox(err));
                    }
                  });
                }),
              ),
            ),
          ),
        ),
      );
      const dropKb = deleteButton("删除知识库", async (b) => {
        await busy(b, async () => {
          try {
            await api(`/api/v1/kbs/${encodeURIComponent(name)}`, { method: "DELETE" });
            toast(`已删除知识库 ${name}`, "ok");
            emptyNode(detail);
            await app.reloadKbs();
          } catch (err) {
            b.replaceWith(errorBox(err));
          }
        });
      });
      dropKb.dataset.testid = "kb-delete";
      emptyNode(detail).append(
        el("h3", {}, name, " ", manageLink(name), " ", dropKb),
        el(
          "dl",
          { class: "kv" },
          rows.map(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]),
        ),
        el("h4", {}, `文档（${docs.count}）`),
        docs.count ? el("div", { class: "table-wrap" }, table) : el("p", { class: "muted" }, "没有文档。"),
      );
      $("#upload-kb").value = name;
    } catch (err) {
      emptyNode(detail).append(errorBox(err));
    }
  }

  async function pollJob(job, box) {
    let delay = 300;
    while (!DONE.has(job.status)) {
      box.replaceChildren(
        el("p", {}, `任务 ${job.id}：${JOB_STATUS[job.status] || job.status}`),
        jobTable(job),
      );
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(1500, delay * 1.5);
      job = await api(`/api/v1/jobs/${job.id}`);
    }
    box.replaceChildren(
      el(
        "p",
        { class: job.status === "done" ? "ok" : "error", "data-job-status": job.status },
        `任务 ${job.id}：${JOB_STATUS[job.status]}，导入 ${job.indexed}，跳过 ${job.skipped}，失败 ${job.failed}`,
      ),
      jobTable(job),
    );
    return job;
  }

  for (const picker of upForm.querySelectorAll(".file-pick input")) {
    picker.addEventListener("change", () => {
      const names = [...picker.files].map((f) => f.webkitRelativePath || f.name);
      picker.parentElement.querySelector(".file-names").textContent = names.length
        ? `${names.length} 个文件：${names.slice(0, 3).join("、")}${names.length > 3 ? "……" : ""}`
        : "未选择";
    });
  }

  upForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const kb = upForm.elements.kb.value.trim();
    const files = [...upForm.elements.files.files, ...upForm.elements.folder.files];
    emptyNode(upOut);
    if (!kb) return upOut.append(errorBox(new Error("请填写知识库名称")));
    if (!files.length) return upOut.append(errorBox(new Error("请选择文件或文件夹")));
    app.run(async () => {
      const bar = el("progress", { max: "1", value: "0", "aria-label": "上传进度" });
      upOut.append(el("p", {}, `正在上传 ${files.length} 个文件……`), bar);
      try {
        const job = await uploadFiles(kb, files, upForm.elements.ocr.value, (f) => (bar.value = f));
        const box = el("div", { class: "job" });
        emptyNode(upOut).append(box);
        const done = await pollJob(job, box);
        toast(`「${kb}」导入${JOB_STATUS[done.status]}`, done.failed ? "warn" : "ok");
        upForm.reset();
        upForm.elements.kb.value = kb;
        for (const n of upForm.querySelectorAll(".file-names")) n.textContent = "未选择";
        await app.reloadKbs();
        await inspect(kb);
      } catch (err) {
        emptyNode(upOut).append(errorBox(err));
      }
    }, upOut);
  });

  return {
    name: "kbs",
    placeholder: "",
    init: renderList,
    refreshKbs: renderList,
  };
}
