/**
 * The web UI follows its session's turns that it did not run itself (another tab, a script on
 * `/api/chat`, or — through the cluster relay — another gateway worker): `/api/events?session=`
 * says a turn ended and the page reloads the thread, showing the new messages without a reload
 * by the user. Its own turn is not shown twice.
 */
import { afterEach, expect, it } from "vitest";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";
import { useWebUiBrowser } from "./browser.js";

const web = useWebUiBrowser();
let fx: GatewayFixture | undefined;

afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** A turn of the page's session (`web:default`) sent by another client, read to its end. */
async function chatElsewhere(url: string, message: string): Promise<void> {
  const res = await fetch(`${url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ session: "default", message }) });
  expect(res.status).toBe(200);
  expect(await res.text()).toContain("event: done");
}

web.describe("web UI: following the session (headless Chromium)", () => {
  it("shows a turn another client ran in its session, and its own turns once", async () => {
    fx = await startGatewayFixture({ webRoot: web.webRoot() });
    const page = await web.browser().newPage();
    try {
      const events = page.waitForRequest((r) => r.url().includes("/api/events?session=web%3Adefault"));
      await page.goto(fx.url);
      await events;
      fx.fake.enqueue({ text: "answered for the other tab" });
      await chatElsewhere(fx.url, "from another tab");
      await page.getByTestId("user-message").filter({ hasText: "from another tab" }).waitFor();
      await page.getByTestId("assistant-message").filter({ hasText: "answered for the other tab" }).waitFor();

      fx.fake.enqueue({ text: "my own answer" });
      await page.getByTestId("input").fill("mine");
      await page.getByTestId("send").click();
      await page.getByTestId("assistant-message").filter({ hasText: "my own answer" }).waitFor();
      await page.getByTestId("send").waitFor({ state: "visible" });
      // A third turn from elsewhere: once it shows, the page has handled every event before it.
      fx.fake.enqueue({ text: "third" });
      await chatElsewhere(fx.url, "one more");
      await page.getByTestId("assistant-message").filter({ hasText: "third" }).waitFor();
      await expect.poll(async () => (await page.getByTestId("assistant-message").allTextContents()).map((t) => t.trim())).toEqual(["answered for the other tab", "my own answer", "third"]);
    } finally {
      await page.close();
    }
  });
});
