/**
 * A hand-written SVG of the side-by-side figures: one panel per figure, one horizontal bar per
 * contender (median), with a whisker for min–max. No dependencies; opens in any browser.
 */
import type { ColdStartResult } from "./cold-start.js";
import type { Figure } from "./peers-bench.js";

const COLORS: Record<string, string> = {
  nanobot: "#2f6fdf",
  "nanobot-loop": "#7aa7f5",
  "openai-agents": "#10a37f",
  "ai-sdk": "#444444",
  "jcheese-nanobot": "#d9822b",
};

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The cold-start rows as one more panel (time to the first LLM request). */
export function coldStartFigure(cold: ColdStartResult): Figure {
  return {
    name: "cold start: process start → first LLM request",
    unit: "ms",
    lowerIsBetter: true,
    rows: cold.rows.filter((r) => r.toFirstRequestMs.runs > 0).map((r) => ({ contender: r.contender, values: [], summary: r.toFirstRequestMs })),
    ratios: [],
  };
}

export function renderSvg(title: string, figures: Figure[]): string {
  const width = 760;
  const labelW = 130;
  const barH = 14;
  const panelGap = 34;
  let y = 56;
  const parts: string[] = [`<text x="10" y="24" font-size="16" font-weight="bold">${esc(title)}</text>`];
  for (const f of figures) {
    const max = Math.max(...f.rows.map((r) => (Number.isFinite(r.summary.max) ? r.summary.max : 0)), 1e-9);
    const scale = (width - labelW - 90) / max;
    parts.push(`<text x="10" y="${y}" font-size="13" font-weight="bold">${esc(`${f.name} [${f.unit}]${f.lowerIsBetter ? " — lower is better" : " — higher is better"}`)}</text>`);
    y += 8;
    for (const r of f.rows) {
      const m = r.summary.median;
      if (!Number.isFinite(m)) continue;
      const color = COLORS[r.contender] ?? "#999999";
      parts.push(
        `<text x="10" y="${y + barH - 3}" font-size="11">${esc(r.contender)}</text>`,
        `<rect x="${labelW}" y="${y}" width="${(m * scale).toFixed(1)}" height="${barH}" fill="${color}"/>`,
        `<line x1="${(labelW + r.summary.min * scale).toFixed(1)}" x2="${(labelW + r.summary.max * scale).toFixed(1)}" y1="${y + barH / 2}" y2="${y + barH / 2}" stroke="#000" stroke-width="1"/>`,
        `<text x="${(labelW + Math.max(m, r.summary.max) * scale + 6).toFixed(1)}" y="${y + barH - 3}" font-size="11">${m >= 100 ? m.toFixed(0) : m.toFixed(1)}</text>`,
      );
      y += barH + 4;
    }
    y += panelGap - 8;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="#fff"/>\n${parts.join("\n")}\n</svg>\n`;
}
