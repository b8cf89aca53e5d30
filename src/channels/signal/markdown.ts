/**
 * Markdown → Signal text styles. Signal has no markup: a message is plain text plus style
 * ranges (`start:length:STYLE`, counted in UTF-16 units, which is what JS string offsets are),
 * passed to signal-cli's `send` as `textStyle`. Code (fenced and inline) becomes MONOSPACE and is
 * left alone otherwise; headings become BOLD; `**bold**`, `*italic*` / `_italic_`, `~~strike~~`
 * map to their styles; `[text](url)` becomes "text (url)"; list dashes become bullets.
 * Tables are left as written.
 */
type Style = "BOLD" | "ITALIC" | "STRIKETHROUGH" | "MONOSPACE";

interface Run {
  text: string;
  styles: readonly Style[];
  /** Code: no further rule looks inside. */
  fixed: boolean;
}

interface Rule {
  pattern: RegExp;
  /** The replacement text for a match, and the style it adds (if any). */
  render: (match: RegExpExecArray) => { text: string; style?: Style; fixed?: boolean };
}

const RULES: Rule[] = [
  { pattern: /```[\w+-]*\n?([\s\S]*?)```/g, render: (m) => ({ text: (m[1] ?? "").replace(/\n$/, ""), style: "MONOSPACE", fixed: true }) },
  { pattern: /`([^`\n]+)`/g, render: (m) => ({ text: m[1] ?? "", style: "MONOSPACE", fixed: true }) },
  { pattern: /^#{1,6}[ \t]+(.+)$/gm, render: (m) => ({ text: m[1] ?? "", style: "BOLD" }) },
  { pattern: /^>[ \t]?/gm, render: () => ({ text: "" }) },
  { pattern: /^([ \t]*)[-*+][ \t]+/gm, render: (m) => ({ text: `${m[1] ?? ""}• ` }) },
  { pattern: /\[([^\]\n]+)\]\(([^)\s]+)\)/g, render: (m) => ({ text: sameUrl(m[1]!, m[2]!) ? m[2]! : `${m[1]!} (${m[2]!})` }) },
  { pattern: /\*\*(.+?)\*\*|__(.+?)__/gs, render: (m) => ({ text: m[1] ?? m[2] ?? "", style: "BOLD" }) },
  { pattern: /(?<![*\w])\*([^*\n]+)\*(?![*\w])|(?<![_\w])_([^_\n]+)_(?![_\w])/g, render: (m) => ({ text: m[1] ?? m[2] ?? "", style: "ITALIC" }) },
  { pattern: /~~(.+?)~~/gs, render: (m) => ({ text: m[1] ?? "", style: "STRIKETHROUGH" }) },
];

function sameUrl(text: string, url: string): boolean {
  const bare = (s: string): string => s.replace(/^https?:\/\/(www\.)?/i, "").replace(/\/+$/, "").toLowerCase();
  return bare(text) === bare(url);
}

function applyRule(runs: Run[], rule: Rule): Run[] {
  const out: Run[] = [];
  for (const run of runs) {
    if (run.fixed) {
      out.push(run);
      continue;
    }
    let at = 0;
    const pattern = new RegExp(rule.pattern.source, rule.pattern.flags);
    for (let m = pattern.exec(run.text); m; m = pattern.exec(run.text)) {
      if (m[0].length === 0) {
        pattern.lastIndex++;
        continue;
      }
      if (m.index > at) out.push({ text: run.text.slice(at, m.index), styles: run.styles, fixed: false });
      const { text, style, fixed } = rule.render(m);
      out.push({ text, styles: style && !run.styles.includes(style) ? [...run.styles, style] : run.styles, fixed: fixed ?? false });
      at = m.index + m[0].length;
    }
    if (at < run.text.length) out.push({ text: run.text.slice(at), styles: run.styles, fixed: false });
  }
  return out;
}

export interface SignalText {
  text: string;
  /** signal-cli `textStyle` entries: `start:length:STYLE`. */
  styles: string[];
}

export function markdownToSignal(markdown: string): SignalText {
  let runs: Run[] = [{ text: markdown, styles: [], fixed: false }];
  for (const rule of RULES) runs = applyRule(runs, rule);
  let text = "";
  const styles: string[] = [];
  for (const run of runs) {
    if (!run.text) continue;
    for (const style of run.styles) styles.push(`${text.length}:${run.text.length}:${style}`);
    text += run.text;
  }
  return { text, styles };
}
