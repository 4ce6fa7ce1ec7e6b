// Bar charts as standalone SVG text, hand-made (no chart dependency): one bar per label, or
// groups of bars (e.g. requests per pod, grouped by policy). Axis from 0 to a rounded maximum
// with 5 gridlines; labels and values are XML-escaped. Pure; never throws (no data or all zeros
// draws an empty axis).

export interface Bar { label: string; value: number }
export interface BarGroup { label: string; bars: Bar[] }

const WIDTH = 720;
const HEIGHT = 360;
const MARGIN = { top: 40, right: 20, bottom: 80, left: 70 };
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** 1, 2 or 5 times a power of ten, >= value (a readable axis maximum). */
export function niceCeiling(value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function formatValue(v: number): string {
  if (v === 0) return "0";
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(1);
  return v.toPrecision(2);
}

function frame(title: string, unit: string, max: number, body: string): string {
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  let grid = "";
  for (let i = 0; i <= 5; i++) {
    const v = (max * i) / 5;
    const y = MARGIN.top + plotH - (plotH * i) / 5;
    grid += `<line x1="${MARGIN.left}" y1="${y}" x2="${WIDTH - MARGIN.right}" y2="${y}" stroke="#ddd"/>`;
    grid += `<text x="${MARGIN.left - 6}" y="${y + 4}" text-anchor="end" font-size="11">${escapeXml(formatValue(v))}</text>`;
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n`
    + `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif">`
    + `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`
    + `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`
    + `<text x="16" y="${MARGIN.top + plotH / 2}" text-anchor="middle" font-size="11" transform="rotate(-90 16 ${MARGIN.top + plotH / 2})">${escapeXml(unit)}</text>`
    + grid + body + `</svg>\n`;
}

/** Bars of one or more series per group; a single series is a plain bar chart. */
export function groupedBarChart(title: string, unit: string, groups: readonly BarGroup[]): string {
  const values = groups.flatMap((g) => g.bars.map((b) => b.value)).filter((v) => Number.isFinite(v));
  const max = niceCeiling(Math.max(0, ...values));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const slot = groups.length > 0 ? plotW / groups.length : plotW;
  const series = [...new Set(groups.flatMap((g) => g.bars.map((b) => b.label)))];
  let body = "";
  groups.forEach((g, gi) => {
    const barW = (slot * 0.8) / Math.max(1, g.bars.length);
    g.bars.forEach((b, bi) => {
      const v = Number.isFinite(b.value) ? Math.max(0, b.value) : 0;
      const h = (plotH * v) / max;
      const x = MARGIN.left + gi * slot + slot * 0.1 + bi * barW;
      const color = PALETTE[(groups.length === 1 || g.bars.length === 1 ? gi : series.indexOf(b.label)) % PALETTE.length];
      body += `<rect x="${x.toFixed(1)}" y="${(MARGIN.top + plotH - h).toFixed(1)}" width="${Math.max(1, barW - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${color}"><title>${escapeXml(`${g.label} ${b.label}: ${formatValue(b.value)}`)}</title></rect>`;
      if (g.bars.length === 1) {
        body += `<text x="${(x + barW / 2).toFixed(1)}" y="${(MARGIN.top + plotH - h - 4).toFixed(1)}" text-anchor="middle" font-size="11">${escapeXml(formatValue(b.value))}</text>`;
      }
    });
    const cx = MARGIN.left + gi * slot + slot / 2;
    const ly = MARGIN.top + plotH + 14;
    body += `<text x="${cx.toFixed(1)}" y="${ly}" text-anchor="end" font-size="11" transform="rotate(-30 ${cx.toFixed(1)} ${ly})">${escapeXml(g.label)}</text>`;
  });
  // A legend when bars within a group are different series (e.g. pods).
  if (groups.some((g) => g.bars.length > 1)) {
    series.forEach((name, i) => {
      const x = WIDTH - MARGIN.right - 110;
      const y = MARGIN.top + i * 14;
      body += `<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${PALETTE[i % PALETTE.length]}"/><text x="${x + 14}" y="${y}" font-size="11">${escapeXml(name)}</text>`;
    });
  }
  return frame(title, unit, max, body);
}

export function barChart(title: string, unit: string, bars: readonly Bar[]): string {
  return groupedBarChart(title, unit, bars.map((b) => ({ label: b.label, bars: [{ label: b.label, value: b.value }] })));
}
