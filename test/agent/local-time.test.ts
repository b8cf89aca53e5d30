import { describe, expect, it } from "vitest";
import { describeNow, offsetLabel } from "../../src/agent/local-time.js";

describe("the current time in the system prompt", () => {
  it("formats local time like Intl's en-US full date and short time, without loading Intl", () => {
    for (const at of [Date.UTC(2026, 11, 2, 0, 5), Date.UTC(2026, 0, 15, 12, 30), Date.UTC(2024, 1, 29, 23, 59)]) {
      const now = new Date(at);
      const intl = now.toLocaleString("en-US", { dateStyle: "full", timeStyle: "short" }).replace(/\u202f/g, " ");
      expect(describeNow(now, undefined).time).toBe(intl);
    }
  });

  it("names the zone by TZ, else by its UTC offset", () => {
    const now = new Date(Date.UTC(2026, 0, 1));
    expect(describeNow(now, undefined, { TZ: "Europe/Paris" }).zone).toBe("Europe/Paris");
    expect(describeNow(now, undefined, {}).zone).toBe(offsetLabel(now.getTimezoneOffset()));
    expect([0, -120, 300, -330].map(offsetLabel)).toEqual(["UTC", "UTC+02:00", "UTC-05:00", "UTC+05:30"]);
  });

  it("converts to a configured IANA zone and falls back to UTC for an unknown one", () => {
    const now = new Date(Date.UTC(2026, 0, 15, 9, 30));
    expect(describeNow(now, "Asia/Tokyo")).toEqual({ time: "Thursday, January 15, 2026 at 6:30 PM", zone: "Asia/Tokyo" });
    expect(describeNow(now, "Mars/Olympus")).toEqual({ time: "2026-01-15T09:30:00.000Z", zone: "UTC" });
  });
});
