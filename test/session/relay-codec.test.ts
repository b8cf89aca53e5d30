/**
 * The cluster relay's wire form: events cut into NOTIFY-sized chunks at UTF-8 character
 * boundaries, read back whatever the payload holds (`|` included), and put together again when
 * chunks of several workers' events interleave.
 */
import { describe, expect, it } from "vitest";
import { Reassembler, decodeFrame, encodeEvent, splitUtf8 } from "../../src/cluster/relay-codec.js";

describe("relay codec", () => {
  it("sends a small event as one payload and reads it back, bars in the data included", () => {
    const json = JSON.stringify({ text: "a|b|c|d|e|f" });
    const frames = encodeEvent("w1", "1", "turn", json);
    expect(frames).toHaveLength(1);
    const frame = decodeFrame(frames[0]!)!;
    expect(frame).toMatchObject({ worker: "w1", event: "1", index: 0, count: 1, topic: "turn", piece: json });
    expect(new Reassembler().add(frame)).toEqual({ topic: "turn", json });
  });

  it("cuts a large event into pieces within the byte limit, never inside a character", () => {
    const text = "añ€😀".repeat(500); // 1, 2, 3 and 4 bytes per character
    const pieces = splitUtf8(text, 101);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) {
      expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(101);
      expect(piece).not.toContain("\uFFFD");
    }
    expect(pieces.join("")).toBe(text);
  });

  it("keeps every payload of a chunked event under PostgreSQL's 8000-byte limit", () => {
    const json = JSON.stringify({ content: "€".repeat(20_000) });
    const frames = encodeEvent("3f0c2a9e-0d1b-4c55-9a57-2c9b8f1d7e61", "zz", "channel", json);
    expect(frames.length).toBeGreaterThan(5);
    for (const f of frames) expect(Buffer.byteLength(f)).toBeLessThan(8000);
  });

  it("reassembles interleaved chunks of two workers' events", () => {
    const a = JSON.stringify({ who: "a", body: "x".repeat(300) });
    const b = JSON.stringify({ who: "b", body: "y".repeat(300) });
    const fa = encodeEvent("wa", "1", "turn", a, 64).map((p) => decodeFrame(p)!);
    const fb = encodeEvent("wb", "1", "turn", b, 64).map((p) => decodeFrame(p)!);
    const r = new Reassembler();
    const out: string[] = [];
    for (let i = 0; i < Math.max(fa.length, fb.length); i++) {
      for (const f of [fa[i], fb[i]]) {
        const whole = f && r.add(f);
        if (whole) out.push(whole.json);
      }
    }
    expect(out.sort()).toEqual([a, b].sort());
    expect(r.size).toBe(0);
  });

  it("drops partial events when cleared or when too many are pending", () => {
    const r = new Reassembler(2);
    for (const event of ["1", "2", "3"]) r.add(decodeFrame(encodeEvent("w", event, "t", "z".repeat(100), 10)[0]!)!);
    expect(r.size).toBe(2);
    r.clear();
    expect(r.size).toBe(0);
  });

  it("refuses a malformed payload and a token that could hide a separator", () => {
    expect(decodeFrame("no separators")).toBeUndefined();
    expect(decodeFrame("w|e|2|2|t|x")).toBeUndefined();
    expect(() => encodeEvent("w|x", "1", "t", "{}")).toThrow(/invalid relay token/);
  });
});
