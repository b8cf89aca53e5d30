/**
 * The stdio reader's line splitting: lines across chunks, CRLF, and a line over the limit
 * reported (size, head, tail) without being buffered, with the lines after it unaffected.
 */
import { describe, expect, it } from "vitest";
import { BoundedLineReader } from "../../src/mcp/line-reader.js";
import type { OversizedLine } from "../../src/mcp/line-reader.js";

function collect(max: number): { reader: BoundedLineReader; lines: string[]; oversized: OversizedLine[] } {
  const lines: string[] = [];
  const oversized: OversizedLine[] = [];
  const reader = new BoundedLineReader(max, { line: (t) => lines.push(t), oversized: (o) => oversized.push(o) });
  return { reader, lines, oversized };
}

describe("BoundedLineReader", () => {
  it("joins lines split across chunks and strips CR", () => {
    const { reader, lines } = collect(1024);
    for (const chunk of ['{"a":', '1}\r\n{"b"', ':2}\n\n{"c":3', "}\n"]) reader.push(Buffer.from(chunk));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("reports a line over the limit with its size and both ends, then reads on", () => {
    const { reader, lines, oversized } = collect(1000);
    const big = `{"result":{"text":"${"x".repeat(5000)}"},"jsonrpc":"2.0","id":42}`;
    // Fed in small pieces, as a pipe delivers it.
    const all = Buffer.from(`{"first":1}\n${big}\n{"after":2}\n`);
    for (let i = 0; i < all.length; i += 300) reader.push(all.subarray(i, i + 300));
    expect(lines).toEqual(['{"first":1}', '{"after":2}']);
    expect(oversized).toHaveLength(1);
    expect(oversized[0]?.bytes).toBe(Buffer.byteLength(big));
    expect(oversized[0]?.head.startsWith('{"result":{"text":"xxx')).toBe(true);
    expect(oversized[0]?.tail.endsWith('"jsonrpc":"2.0","id":42}')).toBe(true);
    expect(oversized[0]!.head.length + oversized[0]!.tail.length).toBeLessThanOrEqual(1024);
  });
});
