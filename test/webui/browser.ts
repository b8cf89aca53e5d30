/**
 * What every web UI test file needs: the UI built once into a temporary folder (the gateway
 * serves it as `webRoot`) and headless Chromium, launched before the file's tests and closed
 * after them. Nothing starts when Chromium is missing (the suite skips, or fails under CI).
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll } from "vitest";
import { needs } from "../support/requires.js";
import type { Requirement } from "../support/requires.js";

/** Where screenshots go (kept by CI). */
export const ARTIFACTS = resolve("test-artifacts");

const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export interface WebUiBrowser {
  /** `describe` that skips (with one line) without Chromium, and fails under CI=true. */
  describe: Requirement["describe"];
  /** The built UI's folder (the fixture's `webRoot`). */
  webRoot(): string;
  browser(): Browser;
}

/** Registers the build and the browser for this test file; `extraArgs` go to Chromium. */
export function useWebUiBrowser(extraArgs: readonly string[] = []): WebUiBrowser {
  const binary = needs.chromium();
  let webRoot: string | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!binary.available) return;
    webRoot = await mkdtemp(join(tmpdir(), "nanobot-web-dist-"));
    await build({ configFile: resolve("web/vite.config.ts"), logLevel: "silent", build: { outDir: webRoot, emptyOutDir: true } });
    await mkdir(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: binary.path, args: [...extraArgs, ...CHROMIUM_ARGS] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    if (webRoot !== undefined) await rm(webRoot, { recursive: true, force: true });
  });
  return {
    describe: binary.describe,
    webRoot: () => {
      if (webRoot === undefined) throw new Error("the web UI was not built (see beforeAll)");
      return webRoot;
    },
    browser: () => {
      if (browser === undefined) throw new Error("Chromium did not start (see beforeAll)");
      return browser;
    },
  };
}
