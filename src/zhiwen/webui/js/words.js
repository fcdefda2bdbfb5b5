// 词典 / 同义词: the words the KB's tokenizer keeps whole (GET/PUT …/dictionary {words}) and the
// synonym groups that expand a query (GET/PUT …/synonyms {groups}), edited as text — a word a
// line; a group a line, its words split by spaces or commas — with CSV import (the PUT routes
// take a text/csv body) and export (…/dictionary.csv, …/synonyms.csv). The index follows a
// dictionary change in the background.

import { el, errorBox, toast } from "./util.js";
import { download, kbApi, kbPath, lines, loadInto, sendBody } from "./ownerkit.js";

/** 「土豆 马铃薯，洋芋」 → ["土豆", "马铃薯", "洋芋"]: one line's group. */
export const groupOf = (line) =>
  line
    .split(/[\s,，、;；]+/)
    .map((w) => w.trim())
    .filter(Boolean);

const KINDS = {
  dictionary: {
    title: "词典",
    help: "分词时保持完整的词（专业术语、产品名），每行一个。",
    toText: (data) => (data.words || []).join("\n"),
    toBody: (text) => ({ words: lines(text) }),
    count: (data) => `${(data.words || []).length} 个词`,
  },
  synonyms: {
    title: "同义词",
    help: "每行一组，词之间用空格或逗号分隔，如「土豆 马铃薯 洋芋」：问到其中一个词时也检索其他词。",
    toText: (data) => (data.groups || []).map((g) => g.join(" ")).join("\n"),
    toBody: (text) => ({
      groups: lines(text)
        .map(groupOf)
        .filter((g) => g.length >= 2),
    }),
    count: (data) => `${(data.groups || []).length} 组`,
  },
};

function wordsEditor(kb, kind) {
  const spec = KINDS[kind];
  const text = el("textarea", { rows: "10", "aria-label": spec.title, "data-testid": `${kind}-text` });
  const status = el("p", { class: "muted small", "aria-live": "polite", "data-testid": `${kind}-status` });
  const box = el("div", { class: "words-body" });
  const show = (data) => {
    text.value = spec.toText(data || {});
    status.textContent = `共 ${spec.count(data || {})}`;
  };
  const file = el("input", { type: "file", accept: ".csv,text/csv", "data-testid": `${kind}-import-file` });
  const save = el(
    "button",
    { type: "submit", class: "primary small", "data-testid": `${kind}-save` },
    "保存",
  );
  const form = el(
    "form",
    { class: "card-form words", "data-testid": `owner-${kind}` },
    el("h3", {}, spec.title),
    el("p", { class: "muted small" }, spec.help),
    box,
    el(
      "div",
      { class: "row" },
      save,
      el(
        "label",
        { class: "file-pick" },
        file,
        el("span", { class: "file-btn" }, "导入 CSV"),
        el("span", { class: "file-names" }, ""),
      ),
      el(
        "button",
        {
          type: "button",
          class: "ghost small",
          "data-testid": `${kind}-export`,
          onclick: () =>
            download(kbPath(kb, `/${kind}.csv`), `${kb}-${kind}.csv`).catch((err) =>
              status.replaceChildren(errorBox(err)),
            ),
        },
        "导出 CSV",
      ),
    ),
    status,
  );
  const load = () =>
    loadInto(box, async () => {
      show(await kbApi(kb, `/${kind}`));
      return text;
    });
  const apply = async (send) => {
    form.querySelector(".error")?.remove();
    try {
      const data = await send();
      show(data && (data.words || data.groups) ? data : await kbApi(kb, `/${kind}`));
      toast(`${spec.title}已保存`, "ok");
    } catch (err) {
      form.append(errorBox(err));
    }
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    apply(() => kbApi(kb, `/${kind}`, { method: "PUT", body: spec.toBody(text.value) }));
  });
  file.addEventListener("change", async () => {
    const picked = file.files[0];
    if (!picked) return;
    await apply(() => sendBody(kbPath(kb, `/${kind}`), picked));
    file.value = "";
  });
  load();
  return form;
}

export function createWordsPanel({ kb }) {
  return el(
    "section",
    { class: "owner-panel words-grid", "data-testid": "owner-words" },
    wordsEditor(kb, "dictionary"),
    wordsEditor(kb, "synonyms"),
  );
}
