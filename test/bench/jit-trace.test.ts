import { describe, expect, it } from "vitest";
import { WINDOW_MARK } from "../../bench/contenders/types.js";
import { parseWindow } from "../../bench/support/jit-trace.js";

describe("optimizing compiles in the peers bench's window (profile-jit)", () => {
  it("counts only what V8 compiled and deoptimized between the worker's marks", () => {
    const compiled = (name: string, a: string, b: string, c: string): string =>
      `[completed compiling 0x2b7514984921 <JSFunction ${name} (sfi = 0x2c03f6bd3371)> (target TURBOFAN) - took ${a}, ${b}, ${c} ms]`;
    const trace = parseWindow(
      [
        compiled("beforeTheWindow", "1", "50", "1"),
        `${WINDOW_MARK} start ===`,
        "[marking 0x22f4 <JSFunction countSynthetic (sfi = 0x3c75)> for optimization to TURBOFAN, ConcurrencyMode::kConcurrent, reason: small function]",
        compiled("countSynthetic", "0.012", "0.889", "0.032"),
        "[completed compiling 0x26f2e6e83231 <JSFunction (sfi = 0x1a8eabbf0741)> (target TURBOFAN) - took 0.100, 2.000, 0.400 ms]",
        "[bailout (kind: deopt-eager, reason: Insufficient type feedback for call): begin. deoptimizing 0x0bf5 <JSFunction randomSuffix (sfi = 0x1e5e)>, 0x2328 <Code TURBOFAN>, opt id 32]",
        `${WINDOW_MARK} end ===`,
        compiled("afterTheWindow", "1", "50", "1"),
      ].join("\n"),
    );
    expect(trace.sawWindow).toBe(true);
    expect(trace.compiles.map((c) => c.name)).toEqual(["countSynthetic", "(anonymous)"]);
    expect(trace.compiles[0]!.ms).toBeCloseTo(0.933, 6);
    expect(trace.compiles[1]!.ms).toBeCloseTo(2.5, 6);
    expect(trace.deopts).toEqual(["randomSuffix: Insufficient type feedback for call (deopt-eager)"]);
    expect(parseWindow(compiled("noMarks", "1", "1", "1")).sawWindow).toBe(false);
  });
});
