/**
 * The gateway bench's reading of `Server-Timing`: the added time and its three parts, as the
 * gateway (and the floor relay) write the header.
 */
import { describe, expect, it } from "vitest";
import { gatewayShare, splitAdded } from "../../bench/gateway-bench.js";

describe("the gateway bench's Server-Timing split", () => {
  it("parts the added time into inside the gateway, the model calls beyond 50 ms each, and outside its clock", () => {
    const header = 'gate;dur=800.5;desc="concurrency gate", model;dur=104;desc="2 calls", restore;dur=0.2, run;dur=105, total;dur=907.5';
    const latency = 910;
    const split = splitAdded(latency, header);
    expect(split.insideMs).toBeCloseTo(907.5 - 800.5 - 104, 6);
    expect(split.modelBeyondMs).toBeCloseTo(104 - 100, 6);
    expect(split.outsideMs).toBeCloseTo(910 - 907.5, 6);
    expect(split.insideMs + split.modelBeyondMs + split.outsideMs).toBeCloseTo(gatewayShare(latency, header), 6);
  });

  it("refuses a header without the gateway's clock", () => {
    expect(() => splitAdded(60, 'gate;dur=1, model;dur=50;desc="1 call"')).toThrow(/no usable Server-Timing/);
  });
});
