import { describe, expect, it } from "vitest";
import { apiSessionKey, parseSessionKey, sessionKeyFor } from "../../src/session/index.js";

describe("session keys", () => {
  it("are channel:chatId with CLI, API and unified defaults", () => {
    expect(sessionKeyFor({ channel: "cli" })).toBe("cli:direct");
    expect(sessionKeyFor({ channel: "telegram", chatId: "12345" })).toBe("telegram:12345");
    expect(sessionKeyFor({ channel: "telegram", chatId: "12345", unified: true })).toBe("unified:default");
    expect(apiSessionKey("abc")).toBe("api:abc");
    expect(apiSessionKey()).toBe("api:default");
    expect(() => sessionKeyFor({ channel: "telegram" })).toThrow(/needs a chat id/);
    expect(() => sessionKeyFor({ channel: "a:b", chatId: "1" })).toThrow(/invalid channel/);
  });

  it("parse at the first colon", () => {
    expect(parseSessionKey("matrix:!room:server.org")).toEqual({ channel: "matrix", chatId: "!room:server.org" });
    expect(() => parseSessionKey("nocolon")).toThrow(/invalid session key/);
  });
});
