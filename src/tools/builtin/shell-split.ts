/**
 * A small bash lexer for the exec guard. It splits a command into the simple commands bash
 * will run — on `;`, `&&`, `||`, `|`, `&`, newlines — and pulls out the commands hidden in
 * `$(…)`, backticks, `(…)` and `<(…)`, each as its own segment. Words come back with quotes
 * and escapes removed (`r''m`, `\rm`, `$'\x72m'` all read `rm`), which is what deny rules must
 * see. It is deliberately conservative: anything it cannot parse is reported, never guessed.
 */

export interface ShellRedirect {
  op: string;
  target: string;
}

export interface ShellSegment {
  /** The segment's source text, trimmed (what allow patterns are matched against). */
  text: string;
  /** Words with quoting removed; redirect operators and their targets are not included. */
  words: string[];
  redirects: ShellRedirect[];
  /** 0 for top-level commands, >0 inside substitutions and subshells. */
  depth: number;
}

export interface ShellParse {
  segments: ShellSegment[];
  /** Set when the command is malformed (unbalanced quotes or parentheses). */
  error?: string;
}

const SIMPLE_ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };

/** Decodes the body of `$'…'` (ANSI-C quoting). */
function ansiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)/g, (_m, esc: string) => {
    if (/^[xuU]/.test(esc) && esc.length > 1) return String.fromCodePoint(parseInt(esc.slice(1), 16));
    if (/^[0-7]+$/.test(esc)) return String.fromCharCode(parseInt(esc, 8));
    return SIMPLE_ESCAPES[esc] ?? `\\${esc}`;
  });
}

class Lexer {
  readonly segments: ShellSegment[] = [];
  error?: string;
  constructor(private readonly src: string) {}

  /** Parses from `i` until end of input or an unmatched `)` (when `nested`); returns the stop index. */
  parse(i: number, depth: number, nested: boolean): number {
    const src = this.src;
    let segStart = i;
    let words: string[] = [];
    let redirects: ShellRedirect[] = [];
    let word = "";
    let inWord = false;
    let pendingRedirect: string | undefined;
    const endWord = (): void => {
      if (!inWord) return;
      if (pendingRedirect !== undefined) {
        redirects.push({ op: pendingRedirect, target: word });
        pendingRedirect = undefined;
      } else words.push(word);
      word = "";
      inWord = false;
    };
    const endSegment = (end: number): void => {
      endWord();
      const text = src.slice(segStart, end).trim();
      if (words.length > 0 || redirects.length > 0) this.segments.push({ text, words, redirects, depth });
      words = [];
      redirects = [];
    };
    const sub = (from: number): number => {
      const end = this.parse(from, depth + 1, true);
      if (src[end] !== ")") this.error ??= "unbalanced parentheses";
      return end;
    };
    while (i < src.length) {
      const c = src[i] ?? "";
      const next = src[i + 1] ?? "";
      if (c === "\\") {
        if (next !== "\n") {
          word += next;
          inWord = true;
        }
        i += 2;
      } else if (c === "'") {
        const close = src.indexOf("'", i + 1);
        if (close < 0) return this.fail("unbalanced single quote", src.length);
        word += src.slice(i + 1, close);
        inWord = true;
        i = close + 1;
      } else if (c === "$" && next === "'") {
        let j = i + 2;
        while (j < src.length && src[j] !== "'") j += src[j] === "\\" ? 2 : 1;
        if (j >= src.length) return this.fail("unbalanced $' quote", src.length);
        word += ansiC(src.slice(i + 2, j));
        inWord = true;
        i = j + 1;
      } else if (c === '"') {
        i = this.doubleQuoted(i + 1, depth, (text) => (word += text));
        inWord = true;
        if (this.error) return src.length;
      } else if (c === "$" && next === "(") {
        const end = sub(i + 2);
        word += src.slice(i, end + 1);
        inWord = true;
        i = end + 1;
      } else if (c === "`") {
        i = this.backtick(i, depth, (text) => (word += text));
        inWord = true;
      } else if ((c === "<" || c === ">") && next === "(") {
        const end = sub(i + 2);
        word += src.slice(i, end + 1);
        inWord = true;
        i = end + 1;
      } else if (c === "(" && !inWord) {
        endSegment(i);
        i = sub(i + 1) + 1;
        segStart = i;
      } else if (c === ")" && nested) {
        endSegment(i);
        return i;
      } else if (c === "#" && !inWord) {
        const nl = src.indexOf("\n", i);
        i = nl < 0 ? src.length : nl;
      } else if (c === ";" || c === "\n" || c === "|" || (c === "&" && next !== ">")) {
        endSegment(i);
        const two = c + next;
        i += two === "&&" || two === "||" || two === "|&" || two === ";;" ? 2 : 1;
        segStart = i;
      } else if (c === ">" || c === "<" || (c === "&" && next === ">")) {
        // A word made only of digits right before the operator is a file descriptor (2>).
        if (inWord && /^\d+$/.test(word)) {
          word = "";
          inWord = false;
        } else endWord();
        const match = /^(&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)/.exec(src.slice(i));
        const op = match?.[0] ?? c;
        pendingRedirect = op;
        i += op.length;
      } else if (c === " " || c === "\t" || c === "\r") {
        endWord();
        i += 1;
      } else {
        word += c;
        inWord = true;
        i += 1;
      }
    }
    if (nested) this.error ??= "unbalanced parentheses";
    endSegment(src.length);
    return src.length;
  }

  private fail(message: string, at: number): number {
    this.error ??= message;
    return at;
  }

  /** Reads a "…" string starting after the quote; substitutions inside are parsed too. */
  private doubleQuoted(i: number, depth: number, append: (text: string) => void): number {
    const src = this.src;
    while (i < src.length) {
      const c = src[i] ?? "";
      const next = src[i + 1] ?? "";
      if (c === '"') return i + 1;
      if (c === "\\" && '"\\$`\n'.includes(next)) {
        if (next !== "\n") append(next);
        i += 2;
      } else if (c === "$" && next === "(") {
        const end = this.parse(i + 2, depth + 1, true);
        if (src[end] !== ")") return this.fail("unbalanced parentheses", src.length);
        append(src.slice(i, end + 1));
        i = end + 1;
      } else if (c === "`") {
        i = this.backtick(i, depth, append);
      } else {
        append(c);
        i += 1;
      }
    }
    return this.fail("unbalanced double quote", src.length);
  }

  /** Reads a `…` command substitution starting at the opening backtick. */
  private backtick(i: number, depth: number, append: (text: string) => void): number {
    const src = this.src;
    let j = i + 1;
    let body = "";
    while (j < src.length && src[j] !== "`") {
      if (src[j] === "\\" && j + 1 < src.length) {
        body += src[j + 1];
        j += 2;
      } else {
        body += src[j];
        j += 1;
      }
    }
    if (j >= src.length) return this.fail("unbalanced backtick", src.length);
    const inner = parseShell(body);
    for (const segment of inner.segments) this.segments.push({ ...segment, depth: segment.depth + depth + 1 });
    if (inner.error) this.error ??= inner.error;
    append(src.slice(i, j + 1));
    return j + 1;
  }
}

export function parseShell(command: string): ShellParse {
  const lexer = new Lexer(command);
  lexer.parse(0, 0, false);
  return lexer.error ? { segments: lexer.segments, error: lexer.error } : { segments: lexer.segments };
}

/** Leading words that are not the command itself (keywords, grouping, env assignments, wrappers). */
const PREFIX_WORDS = new Set(["{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "time", "case", "esac"]);
const WRAPPERS = new Set(["sudo", "doas", "env", "command", "builtin", "exec", "nohup", "nice", "ionice", "timeout", "stdbuf", "xargs", "time", "busybox"]);

/**
 * The words from the command name on: keywords, `VAR=value` assignments and wrappers such as
 * `sudo`, `env`, `xargs` (with their options) are skipped, so `sudo -u x rm` yields `rm`.
 */
export function commandWords(words: readonly string[]): string[] {
  let i = 0;
  while (i < words.length) {
    const word = words[i] ?? "";
    if (PREFIX_WORDS.has(word) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      i += 1;
    } else if (WRAPPERS.has(word.split("/").pop() ?? word)) {
      i += 1;
      while (i < words.length && (/^-/.test(words[i] ?? "") || /^\d+[smhd]?$/.test(words[i] ?? ""))) i += 1;
    } else break;
  }
  return words.slice(i);
}

/** The command's base name: `/usr/bin/rm` → `rm`. */
export function commandName(words: readonly string[]): string {
  const first = commandWords(words)[0] ?? "";
  return first.split("/").pop() ?? first;
}
