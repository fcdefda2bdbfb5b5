// A small markdown renderer that builds DOM nodes and never parses HTML: raw HTML in the text
// stays text, links are kept only for http(s), relative and #anchors, so an answer can never
// inject markup or script. Covers what zhiwen's answers use: headings, paragraphs, lists
// (nested by indent), GFM tables, fenced code, block quotes, rules, **bold**, *em*, `code`,
// (no __bold__: identifiers like __init__ stay as they are),
// ~~del~~, [links](url) and citation markers [1] / [1, 2] (rendered as buttons via onCite).

const SAFE_URL = /^(https?:\/\/|\/|#|\.\/)/i;

function node(tag, cls, children = []) {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  for (const c of children) n.append(c);
  return n;
}

// -- inline ---------------------------------------------------------------------------------
const INLINE = [
  { re: /`([^`\n]+)`/y, make: (m) => node("code", "", [m[1]]) },
  { re: /\*\*([^*\n](?:[^\n]*?[^*\n])?)\*\*/y, make: (m, ctx) => node("strong", "", inline(m[1], ctx)) },
  { re: /~~([^~\n]+)~~/y, make: (m, ctx) => node("del", "", inline(m[1], ctx)) },
  { re: /\*([^*\s](?:[^*\n]*?[^*\s])?)\*/y, make: (m, ctx) => node("em", "", inline(m[1], ctx)) },
  {
    re: /\[([^\]\n]+)\]\(([^)\s]+)\)/y,
    make: (m, ctx) => {
      if (!SAFE_URL.test(m[2])) return document.createTextNode(m[1]);
      const a = node("a", "", inline(m[1], ctx));
      a.href = m[2];
      if (/^https?:/i.test(m[2])) {
        a.target = "_blank";
        a.rel = "noopener noreferrer";
      }
      return a;
    },
  },
  {
    // citation markers: [1] [2, 3] [1][2]
    re: /\[(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\]/y,
    make: (m, ctx) => {
      const nums = m[1].split(/\s*[,，、]\s*/).map(Number);
      const wrap = node("span", "cites");
      for (const n of nums) {
        if (!ctx.onCite) {
          wrap.append(`[${n}]`);
          continue;
        }
        const b = node("button", "cite", [String(n)]);
        b.type = "button";
        b.title = `查看来源 ${n}`;
        b.setAttribute("aria-label", `查看来源 ${n}`);
        b.addEventListener("click", () => ctx.onCite(n));
        wrap.append(b);
      }
      return wrap;
    },
  },
];
const TRIGGERS = new Set(["`", "*", "~", "["]);

export function inline(text, ctx = {}) {
  const out = [];
  let plain = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    let matched = false;
    if (TRIGGERS.has(ch)) {
      for (const rule of INLINE) {
        rule.re.lastIndex = i;
        const m = rule.re.exec(text);
        if (m) {
          if (plain) (out.push(plain), (plain = ""));
          out.push(rule.make(m, ctx));
          i += m[0].length;
          matched = true;
          break;
        }
      }
    }
    if (!matched) {
      plain += ch;
      i += 1;
    }
  }
  if (plain) out.push(plain);
  return out;
}

// -- blocks ---------------------------------------------------------------------------------
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

function cells(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

function table(lines, ctx) {
  const head = cells(lines[0]);
  const aligns = cells(lines[1]).map((c) =>
    c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : "",
  );
  const t = node("table");
  const tr = node("tr");
  head.forEach((h, k) => {
    const th = node("th", "", inline(h, ctx));
    th.scope = "col";
    if (aligns[k]) th.style.textAlign = aligns[k];
    tr.append(th);
  });
  t.append(node("thead", "", [tr]));
  const body = node("tbody");
  for (const line of lines.slice(2)) {
    const row = node("tr");
    cells(line).forEach((c, k) => {
      const td = node("td", "", inline(c, ctx));
      if (aligns[k]) td.style.textAlign = aligns[k];
      row.append(td);
    });
    body.append(row);
  }
  t.append(body);
  return node("div", "table-wrap", [t]);
}

function list(lines, ctx) {
  // lines: the list's lines (items and their continuation lines), first one an item
  const first = LIST_ITEM.exec(lines[0]);
  const baseIndent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const root = node(ordered ? "ol" : "ul");
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1) root.start = start;
  }
  let item = null;
  let nested = [];
  const flush = () => {
    if (item && nested.length) item.append(blocks(nested, ctx));
    nested = [];
  };
  for (const line of lines) {
    const m = LIST_ITEM.exec(line);
    if (m && m[1].length <= baseIndent + 1) {
      flush();
      item = node("li", "", inline(m[3], ctx));
      root.append(item);
    } else if (item) {
      nested.push(line.slice(Math.min(baseIndent + 2, line.search(/\S|$/))));
    }
  }
  flush();
  return root;
}

export function blocks(lines, ctx) {
  const frag = document.createDocumentFragment();
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const fence = /^\s*(```|~~~)\s*([\w+-]*)/.exec(line);
    if (fence) {
      const code = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) code.push(lines[i++]);
      i += 1; // closing fence (or the end while streaming)
      const c = node("code", "", [code.join("\n")]);
      if (fence[2]) c.dataset.lang = fence[2];
      frag.append(node("pre", "", [c]));
      continue;
    }
    const h = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      frag.append(node(`h${Math.min(6, h[1].length + 2)}`, "md-h", inline(h[2], ctx)));
      i += 1;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      frag.append(node("hr"));
      i += 1;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      const rows = [line, lines[i + 1]];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) rows.push(lines[i++]);
      frag.append(table(rows, ctx));
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i]))
        quoted.push(lines[i++].replace(/^\s{0,3}>\s?/, ""));
      frag.append(node("blockquote", "", [blocks(quoted, ctx)]));
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items = [line];
      i += 1;
      while (i < lines.length) {
        const l = lines[i];
        if (!l.trim()) {
          // a blank line ends the list unless the next line is still part of it
          const next = lines[i + 1];
          if (next !== undefined && (LIST_ITEM.test(next) || /^\s{2,}\S/.test(next))) {
            i += 1;
            continue;
          }
          break;
        }
        if (LIST_ITEM.test(l) || /^\s{2,}\S/.test(l)) items.push(l);
        else break;
        i += 1;
      }
      frag.append(list(items, ctx));
      continue;
    }
    // paragraph: until a blank line or the start of another block; line breaks are kept
    const para = [line];
    i += 1;
    while (
      i < lines.length &&
      lines[i].trim() &&
      !/^\s*(```|~~~|#{1,6}\s|>)/.test(lines[i]) &&
      !LIST_ITEM.test(lines[i]) &&
      !(lines[i].includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]))
    ) {
      para.push(lines[i++]);
    }
    const p = node("p");
    para.forEach((l, k) => {
      if (k) p.append(node("br"));
      p.append(...inline(l.trim(), ctx));
    });
    frag.append(p);
  }
  return frag;
}

/** Render markdown ``text`` into a fragment; ``onCite(n)`` makes [n] markers clickable. */
export function renderMarkdown(text, { onCite } = {}) {
  return blocks(
    String(text ?? "")
      .replace(/\r\n?/g, "\n")
      .split("\n"),
    { onCite },
  );
}
