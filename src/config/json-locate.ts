/**
 * Finds where a JSON text first goes wrong. `JSON.parse` on Node 20 often reports no position
 * ("Unexpected token 'l', "…" is not valid JSON"), so after it fails this small scanner walks
 * the text to name the line and what was expected there.
 */

export interface JsonProblem {
  offset: number;
  reason: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** Returns the first syntax problem, or undefined when the text is valid JSON. */
export function locateJsonError(text: string): JsonProblem | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const fail = (reason: string): never => {
    throw new Stop(i, reason);
  };
  const describe = () => (i >= text.length ? "end of file" : JSON.stringify(text[i]));
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`unexpected ${describe()}; expected a value`);
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\n") fail("unterminated string");
      i += text[i] === "\\" ? 2 : 1;
    }
    if (i >= text.length) fail("unterminated string");
    i++;
  };
  const number = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail(`unexpected ${describe()}; expected a value`);
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") return object();
    if (c === "[") return array();
    if (c === '"') return string();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return number();
    fail(`unexpected ${describe()}; expected a value`);
  };
  const object = () => {
    i++;
    ws();
    if (text[i] === "}") return void i++;
    for (;;) {
      ws();
      if (text[i] !== '"') fail(`unexpected ${describe()}; expected a quoted property name`);
      string();
      ws();
      if (text[i] !== ":") fail(`unexpected ${describe()}; expected ':'`);
      i++;
      value();
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") return void i++;
      fail(`unexpected ${describe()}; expected ',' or '}'`);
    }
  };
  const array = () => {
    i++;
    ws();
    if (text[i] === "]") return void i++;
    for (;;) {
      value();
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") return void i++;
      fail(`unexpected ${describe()}; expected ',' or ']'`);
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${describe()} after the end of the document`);
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return { offset: err.offset, reason: err.reason };
    throw err;
  }
}

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const col = offset - before.lastIndexOf("\n");
  return { line, col };
}
