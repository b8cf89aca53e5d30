/**
 * The web UI sends each message with an Idempotency-Key and sends it again when the connection
 * drops before the answer ends (issue #24). In headless Chromium: the first `/api/chat` reaches
 * the gateway and its turn runs to the end, but the browser's connection is reset; the page says
 * it is sending again, the gateway answers the repeat from the first turn, and the answer shows
 * once — one model call, the message stored once. A 503 (the store unreachable for a moment) is
 * sent again the same way.
 */
import type { Page, Route } from "playwright-core";
import { afterEach, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";
import { useWebUiBrowser } from "./browser.js";

const web = useWebUiBrowser();
let fx: GatewayFixture | undefined;

afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/**
 * A gateway and the UI's page, whose first `/api/chat` goes to `firstAttempt` (later ones reach
 * the gateway); `keys` collects each attempt's Idempotency-Key.
 */
async function openPage(firstAttempt: (route: Route) => Promise<void>): Promise<{ page: Page; keys: string[] }> {
  fx = await startGatewayFixture({ webRoot: web.webRoot() });
  const page = await web.browser().newPage();
  const keys: string[] = [];
  await page.route("**/api/chat", async (route) => {
    keys.push(route.request().headers()["idempotency-key"] ?? "");
    if (keys.length > 1) return route.continue();
    await firstAttempt(route);
  });
  await page.goto(fx.url);
  return { page, keys };
}

web.describe("web UI: a message whose connection dropped (headless Chromium)", () => {
  it("is sent again with its Idempotency-Key and answered once, from the first turn", async () => {
    const { page, keys } = await openPage(async (route) => {
      // The request reaches the gateway and its turn runs to the end; the browser never hears it.
      await (await route.fetch()).body();
      await route.abort("connectionreset");
    });
    try {
      fx!.fake.enqueue({ text: "The **answer**, once." });
      await page.getByTestId("input").fill("ask once");
      await page.getByTestId("send").click();

      const reply = page.getByTestId("assistant-message").last();
      await reply.locator("strong", { hasText: "answer" }).waitFor({ timeout: 20_000 });
      expect(await reply.getByTestId("turn-warning").textContent()).toBe("Connection lost; sending again (1/3)…");
      expect((await reply.locator(".markdown").textContent())?.trim()).toBe("The answer, once.");
      await page.getByTestId("send").waitFor({ state: "visible" });
      expect(await page.getByTestId("inline-error").count()).toBe(0);

      expect(keys).toHaveLength(2);
      expect(keys[0]).toMatch(/^[0-9a-f-]{32,36}$/);
      expect(keys[1]).toBe(keys[0]);
      expect(fx!.fake.requests).toHaveLength(1);
      const stored = await fx!.runtime.store().loadMessages("web:default");
      expect(stored.filter((m) => m.role === "user").map((m) => textOf(m.content))).toEqual(["ask once"]);
    } finally {
      await page.close();
    }
  }, 90_000);

  it("a 503 (the gateway could not reach its session store) is sent again with the same key, then answered", async () => {
    const { page, keys } = await openPage(async (route) => {
      // What the gateway answers while its store is unreachable (errors.ts: store_unavailable).
      await route.fulfill({
        status: 503,
        headers: { "content-type": "application/json", "retry-after": "1" },
        body: JSON.stringify({ error: { message: "The session store is unreachable. Retry the request.", type: "server_error", code: "store_unavailable" } }),
      });
    });
    try {
      fx!.fake.enqueue({ text: "Answered after the retry." });
      await page.getByTestId("input").fill("ask while the store blinks");
      await page.getByTestId("send").click();

      const reply = page.getByTestId("assistant-message").last();
      await reply.getByText("Answered after the retry.").waitFor({ timeout: 20_000 });
      expect(await reply.getByTestId("turn-warning").textContent()).toBe("The gateway is briefly unavailable; sending again (1/3)…");
      expect(await page.getByTestId("inline-error").count()).toBe(0);
      expect(keys).toHaveLength(2);
      expect(keys[1]).toBe(keys[0]);
      expect(fx!.fake.requests).toHaveLength(1);
    } finally {
      await page.close();
    }
  }, 90_000);
});
