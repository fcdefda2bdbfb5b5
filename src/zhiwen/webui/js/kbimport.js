// 导入知识库 (on the 知识库 list): a bundle file from 「导出知识库」 or `zhiwen kb export`, an
// optional new name, 覆盖 (replace a KB of that name) → POST /api/v1/kbs/import (multipart:
// file, name, replace). The server checks the bundle (checksums, format version) before the KB
// appears; a refusal shows its Chinese message.

import { busy, el, errorBox, int, toast } from "./util.js";
import { accessHint, sendFile } from "./ownerkit.js";

const IMPORT_PATH = "/api/v1/kbs/import";
const NAME_PATTERN = "[A-Za-z0-9_\\-\\u4e00-\\u9fff]{1,64}";

function summary(got) {
  return el(
    "p",
    { class: "ok small", "data-testid": "kb-import-ok", "data-kb": got.kb },
    `已导入「${got.kb}」（${got.store}）：${int(got.documents)} 篇文档、${int(got.chunks)} 个片段，` +
      `复用向量 ${int(got.vectors_reused)} 个，重新向量化 ${int(got.embedded)} 个` +
      `${got.replaced ? "，替换了原有的同名知识库" : ""}，用时 ${got.seconds.toFixed(1)} 秒。`,
  );
}

/** What to do in this form about a refusal: the server names the KB that exists (``data.extra.kb``)
 * in words for the command line (--replace, --as). */
function hint(err) {
  const extra = (err.data && err.data.extra) || {};
  if (extra.kb) return "。在这里：勾选「覆盖」替换它，或填写新名称。";
  return accessHint(err);
}

/** The form; after an import the KB list is reloaded (``app.reloadKbs``). */
export function createImportForm(app) {
  const file = el("input", {
    type: "file",
    name: "file",
    accept: ".zwkb,.tar",
    required: true,
    "data-testid": "kb-import-file",
  });
  const names = el("span", { class: "file-names", "aria-live": "polite" }, "未选择");
  const name = el("input", {
    type: "text",
    name: "name",
    pattern: NAME_PATTERN,
    placeholder: "留空则用导出时的名称",
    "data-testid": "kb-import-name",
  });
  const replace = el("input", { type: "checkbox", name: "replace", "data-testid": "kb-import-replace" });
  const submit = el(
    "button",
    { type: "submit", class: "ghost small", "data-testid": "kb-import-submit" },
    "导入",
  );
  const out = el("div", { "aria-live": "polite", "data-testid": "kb-import-result" });
  file.addEventListener("change", () => {
    names.textContent = file.files.length ? file.files[0].name : "未选择";
  });

  const form = el(
    "form",
    { class: "kb-import", "data-testid": "kb-import", novalidate: true },
    el("h3", {}, "导入知识库"),
    el("p", { class: "muted small" }, "导入「导出知识库」得到的文件（.zwkb）：文档、片段、向量与人工整理都会恢复。"),
    el(
      "div",
      { class: "grid-fields" },
      el(
        "div",
        { class: "field" },
        el("span", {}, "文件"),
        el("label", { class: "file-pick" }, file, el("span", { class: "file-btn" }, "选择文件"), names),
      ),
      el("label", { class: "field" }, el("span", {}, "新名称（可选）"), name),
    ),
    el("label", { class: "field check" }, el("span", {}, "覆盖：同名知识库已存在时整体替换它"), replace),
    el("div", { class: "row" }, submit),
    out,
  );

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    out.replaceChildren();
    if (!file.files.length) return out.append(errorBox(new Error("请选择要导入的文件")));
    if (!name.checkValidity())
      return out.append(errorBox(new Error("名称只能包含中文、字母、数字、- 和 _（最多 64 个字符）")));
    out.append(el("p", { class: "muted small" }, "正在上传并校验……"));
    busy(submit, async () => {
      try {
        const got = await sendFile(IMPORT_PATH, file.files[0], {
          name: name.value.trim(),
          replace: replace.checked ? "true" : "",
        });
        out.replaceChildren(summary(got));
        toast(`已导入知识库「${got.kb}」`, "ok");
        form.reset();
        names.textContent = "未选择";
        await app.reloadKbs();
      } catch (err) {
        out.replaceChildren(errorBox(err, hint(err)));
      }
    });
  });
  return form;
}
