// 同步与备份: the KB's remembered sources (folders, pages, sitemaps) and its sync interval, the
// last sync's result (GET …/sync), 「立即同步」 (POST …/sync, then GET …/sync until it is no
// longer running) and 「导出知识库」 (GET …/export: one bundle file that `zhiwen kb import` or the
// KB list's 「导入知识库」 loads into any store).

import { busy, el, errorBox, int, toast } from "./util.js";
import { accessHint, download, kbApi, kbPath, loadInto, when } from "./ownerkit.js";

const KINDS = { folder: "文件夹", url: "网页", sitemap: "站点地图" };
const POLL_FIRST_MS = 300;
const POLL_MAX_MS = 2000;

/** What a source is, as zhiwen.sync.sources.source_kind says. */
export function sourceKind(source) {
  let url;
  try {
    url = new URL(source);
  } catch {
    return "folder";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "folder";
  const path = url.pathname.toLowerCase();
  const last = path.split("/").pop();
  return path.endsWith(".xml") || last.includes("sitemap") ? "sitemap" : "url";
}

/** 1800 → 「每 30 分钟」; null → 「不自动同步」. */
export function intervalText(seconds) {
  if (!seconds) return "不自动同步（只在点击「立即同步」或运行 zhiwen sync 时同步）";
  const units = [
    [86400, "天"],
    [3600, "小时"],
    [60, "分钟"],
  ];
  for (const [size, name] of units) if (seconds % size === 0) return `每 ${int(seconds / size)} ${name}`;
  return `每 ${int(seconds)} 秒`;
}

function sourcesList(sources) {
  if (!sources.length)
    return el(
      "p",
      { class: "muted", "data-testid": "sync-no-sources" },
      "还没有同步来源。运行 zhiwen index 文件夹 --kb 知识库名 会记住该文件夹；也可用 zhiwen sync 知识库名 --add 网址 添加网页或站点地图。",
    );
  return el(
    "ul",
    { class: "sync-sources", "data-testid": "sync-sources" },
    sources.map((s) => {
      const kind = sourceKind(s);
      return el(
        "li",
        { "data-testid": "sync-source", "data-kind": kind },
        el("span", { class: "chip static" }, KINDS[kind]),
        " ",
        el("code", {}, s),
      );
    }),
  );
}

function lastResult(last) {
  if (!last) return el("p", { class: "muted", "data-testid": "sync-last" }, "还没有同步过。");
  const tiles = [
    ["新增", last.added],
    ["修改", last.changed],
    ["删除", last.removed],
    ["未变", last.unchanged],
    ["重新解析", last.parsed],
    ["向量化片段", last.embedded],
  ];
  return el(
    "div",
    { "data-testid": "sync-last", "data-started-at": String(last.started_at) },
    el(
      "p",
      { class: "muted small" },
      `${when(last.started_at)} 开始，用时 ${last.seconds.toFixed(1)} 秒${last.dry_run ? "（试运行，未写入）" : ""}`,
    ),
    el(
      "dl",
      { class: "stat-tiles" },
      tiles.map(([k, v]) =>
        el("div", { class: "tile", "data-testid": `sync-${k}` }, el("dt", {}, k), el("dd", {}, int(v))),
      ),
    ),
    last.errors.length
      ? el(
          "div",
          { class: "error", role: "alert", "data-testid": "sync-errors" },
          el("p", {}, `${last.errors.length} 个错误（其余已同步）：`),
          el(
            "ul",
            {},
            last.errors.map((e) => el("li", {}, e)),
          ),
        )
      : el("p", { class: "ok small", "data-testid": "sync-no-errors" }, "没有错误。"),
  );
}

export function createSafetyPanel({ kb }) {
  const syncBox = el("div", { "data-testid": "sync-status" });
  const note = el("div", { "aria-live": "polite" });
  const state = el("span", { class: "muted small", "data-testid": "sync-state", "aria-live": "polite" });
  const syncBtn = el("button", { type: "button", class: "primary small", "data-testid": "sync-now" }, "立即同步");
  const section = el("section", { class: "owner-panel", "data-testid": "owner-safety" });

  function show(s) {
    syncBtn.disabled = s.running || !s.sources.length;
    state.textContent = s.running ? "同步中……" : "";
    state.dataset.running = String(s.running);
    return [
      el("h4", {}, "同步来源"),
      sourcesList(s.sources),
      el("p", { class: "small" }, "自动同步：", intervalText(s.sync_interval)),
      el("h4", {}, "最近一次同步"),
      lastResult(s.last),
    ];
  }

  /** GET …/sync until it is no longer running (or the panel was closed). */
  async function follow(s) {
    let delay = POLL_FIRST_MS;
    while (s.running && section.isConnected) {
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(POLL_MAX_MS, delay * 1.5);
      s = await kbApi(kb, "/sync");
    }
    return s;
  }

  /** A sync already running when the panel opens (the schedule's, another tab's): follow it. */
  function followRunning(s) {
    follow(s)
      .then((done) => section.isConnected && syncBox.replaceChildren(...show(done)))
      .catch((err) => note.replaceChildren(errorBox(err, accessHint(err))));
  }

  const refresh = () =>
    loadInto(syncBox, async () => {
      const s = await kbApi(kb, "/sync");
      if (s.running) followRunning(s);
      return show(s);
    });

  syncBtn.addEventListener("click", () => {
    note.replaceChildren();
    busy(syncBtn, async () => {
      try {
        const started = await kbApi(kb, "/sync", { method: "POST" });
        if (!started.started) toast("已经在同步，等待它完成", "warn");
        syncBox.replaceChildren(...show(started));
        const done = await follow(started);
        if (!section.isConnected) return;
        syncBox.replaceChildren(...show(done));
        const errors = done.last ? done.last.errors.length : 0;
        toast(errors ? `同步完成，${errors} 个错误` : "同步完成", errors ? "warn" : "ok");
      } catch (err) {
        note.append(errorBox(err, accessHint(err)));
        await refresh();
      }
    });
  });

  const exportBtn = el(
    "button",
    { type: "button", class: "ghost small", "data-testid": "kb-export" },
    "导出知识库",
  );
  const exportNote = el("div", { "aria-live": "polite" });
  exportBtn.addEventListener("click", () => {
    exportNote.replaceChildren(el("p", { class: "muted small" }, "正在打包……"));
    busy(exportBtn, async () => {
      try {
        await download(kbPath(kb, "/export"), `${kb}.zwkb`);
        exportNote.replaceChildren(el("p", { class: "ok small", "data-testid": "kb-exported" }, "已导出。"));
      } catch (err) {
        exportNote.replaceChildren(errorBox(err, accessHint(err)));
      }
    });
  });

  refresh();
  section.append(
    el(
      "div",
      { class: "card-form" },
      el("h3", {}, "同步"),
      el(
        "p",
        { class: "muted small" },
        "重新读取知识库记住的来源：只解析、向量化变化了的文档，来源里删掉的文档也从知识库删除；人工修改的片段会保留。",
      ),
      el(
        "div",
        { class: "toolbar" },
        syncBtn,
        state,
        el("button", { type: "button", class: "ghost small", onclick: refresh }, "刷新"),
      ),
      note,
      syncBox,
    ),
    el(
      "div",
      { class: "card-form" },
      el("h3", {}, "备份"),
      el(
        "p",
        { class: "muted small" },
        "把文档、片段、向量、人工整理（修改、停用、FAQ、词典、同义词）和设置打包为一个文件；在知识库列表的「导入知识库」或 zhiwen kb import 中导入，可换用任一存储后端。",
      ),
      el("div", { class: "row" }, exportBtn),
      exportNote,
    ),
  );
  return section;
}
