// The loan schedule chart: inline SVG, no chart library. Monthly payment of both methods as
// lines, and the interest part of the chosen method as a shaded area; x = years, y = 元.

import { int } from "./util.js";

const NS = "http://www.w3.org/2000/svg";
const W = 640;
const H = 260;
const PAD = { l: 64, r: 16, t: 16, b: 36 };

function svg(tag, attrs = {}, text = null) {
  const n = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (text !== null) n.textContent = text;
  return n;
}

function niceMax(v) {
  const p = 10 ** Math.floor(Math.log10(v || 1));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/**
 * ``series``: [{name, cls, rows}] where rows are the API's schedule rows ({period, payment,
 * interest, …}); ``area``: the series whose interest is shaded. Returns an <svg role="img">.
 */
export function loanChart(series, { area = null, title = "每月还款" } = {}) {
  const months = Math.max(...series.map((s) => s.rows.length));
  const top = niceMax(Math.max(...series.flatMap((s) => s.rows.map((r) => r.payment))) * 1.05);
  const x = (i) => PAD.l + ((W - PAD.l - PAD.r) * i) / Math.max(1, months - 1);
  const y = (v) => H - PAD.b - ((H - PAD.t - PAD.b) * v) / top;
  const root = svg("svg", {
    viewBox: `0 0 ${W} ${H}`,
    class: "chart",
    role: "img",
    "data-testid": "loan-chart",
  });
  const summary = series
    .map(
      (s) =>
        `${s.name}：首月 ${int(s.rows[0].payment)} 元，末月 ${int(s.rows[s.rows.length - 1].payment)} 元`,
    )
    .join("；");
  root.append(svg("title", {}, `${title}（${months} 个月）。${summary}`));

  // grid and y labels
  for (let k = 0; k <= 4; k += 1) {
    const v = (top * k) / 4;
    root.append(svg("line", { x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v), class: "grid" }));
    root.append(svg("text", { x: PAD.l - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, int(v)));
  }
  // x labels: years
  const years = Math.ceil(months / 12);
  const step = years > 20 ? 5 : years > 8 ? 2 : 1;
  for (let yr = 0; yr <= years; yr += step) {
    const i = Math.min(months - 1, yr * 12);
    root.append(
      svg("text", { x: x(i), y: H - PAD.b + 18, "text-anchor": "middle", class: "axis" }, `${yr}年`),
    );
  }
  if (area) {
    const rows = area.rows;
    const pts = rows.map((r, i) => `${x(i).toFixed(1)},${y(r.interest).toFixed(1)}`);
    const d = `M${x(0)},${y(0)} L${pts.join(" L")} L${x(rows.length - 1)},${y(0)} Z`;
    root.append(svg("path", { d, class: "area-interest" }));
  }
  for (const s of series) {
    const d = s.rows.map((r, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(r.payment).toFixed(1)}`).join(" ");
    root.append(svg("path", { d, class: `line ${s.cls}` }));
  }
  return root;
}

/** The legend under the chart (HTML, so it wraps on a phone). */
export function legend(items) {
  const box = document.createElement("div");
  box.className = "legend";
  for (const [cls, label] of items) {
    const i = document.createElement("span");
    const sw = document.createElement("span");
    sw.className = `swatch ${cls}`;
    i.append(sw, label);
    box.append(i);
  }
  return box;
}

/**
 * A chart of values per day (the owner's 统计): ``series`` [{name, cls, values}] over ``labels``
 * (YYYY-MM-DD), drawn as bars side by side (``kind: "bar"``) or lines (``"line"``, a dot per
 * day so one day still shows). ``format`` writes the y labels; ``max`` fixes the top (rates: 1).
 * Returns an <svg role="img"> whose title says every value (what a screen reader reads).
 */
export function dailyChart(
  labels,
  series,
  { kind = "line", format = int, max = null, title = "", testid = null } = {},
) {
  const all = series.flatMap((s) => s.values.filter((v) => typeof v === "number"));
  let top = max || niceMax(Math.max(1, ...all) * 1.05);
  if (!max && format === int) top = Math.max(4, Math.ceil(top / 4) * 4); // whole numbers on the axis
  const n = Math.max(1, labels.length);
  const band = (W - PAD.l - PAD.r) / n;
  const x = (i) => PAD.l + band * (i + 0.5);
  const y = (v) => H - PAD.b - ((H - PAD.t - PAD.b) * Math.min(v, top)) / top;
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: `chart daily ${kind}`, role: "img" });
  if (testid) root.setAttribute("data-testid", testid);
  const said = series.map(
    (s) => `${s.name}：${labels.map((d, i) => `${d} ${format(s.values[i])}`).join("，")}`,
  );
  root.append(svg("title", {}, `${title}。${said.join("；")}`));
  for (let k = 0; k <= 4; k += 1) {
    const v = (top * k) / 4;
    root.append(svg("line", { x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v), class: "grid" }));
    root.append(svg("text", { x: PAD.l - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, format(v)));
  }
  const every = Math.ceil(n / 8); // at most 8 day labels
  labels.forEach((d, i) => {
    if (i % every) return;
    root.append(
      svg("text", { x: x(i), y: H - PAD.b + 18, "text-anchor": "middle", class: "axis" }, d.slice(5)),
    );
  });
  series.forEach((s, k) => {
    if (kind === "bar") {
      const w = Math.max(2, (band * 0.7) / series.length);
      s.values.forEach((v, i) => {
        if (typeof v !== "number") return;
        const left = x(i) - (w * series.length) / 2 + k * w;
        root.append(
          svg("rect", {
            x: left,
            y: y(v),
            width: w,
            height: Math.max(0, y(0) - y(v)),
            class: `bar ${s.cls}`,
          }),
        );
      });
      return;
    }
    const pts = s.values.map((v, i) => (typeof v === "number" ? [x(i), y(v)] : null)).filter(Boolean);
    if (pts.length > 1) {
      const d = pts.map(([px, py], i) => `${i ? "L" : "M"}${px.toFixed(1)},${py.toFixed(1)}`).join(" ");
      root.append(svg("path", { d, class: `line ${s.cls}` }));
    }
    for (const [px, py] of pts) root.append(svg("circle", { cx: px, cy: py, r: 3.5, class: `dot ${s.cls}` }));
  });
  return root;
}
