/**
 * Writes V8's code cache for the bundled CLI after one real `nanobot agent -m` turn, so that it
 * holds the functions a start actually runs (config, session store, prompt, provider call), not
 * only the top-level code a bare compile gives: measured, ~30 ms less to a first turn's exit.
 *
 * The turn runs in a child process (bin/nanobot.js, as users start it) against a stand-in model
 * on loopback that answers every request with one short reply, with its home, workspace and
 * config in a temporary directory and none of the builder's environment but PATH.
 * `NANOBOT_WRITE_CODE_CACHE` makes bin/bundle-loader.js write the cache as that process exits.
 * Used by scripts/bundle-cli.mjs. A failed turn does not fail the build: it says so, and the
 * cache holds what that run compiled (or, if none was written, the first start writes one).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const REPLY = "Ready.";

/** Answers chat completions (streamed or not) with REPLY; anything else with 404. */
function standInModel() {
  return createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(body);
      const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };
      const base = { id: "warm-up", object: "chat.completion", created: 0, model: request.model };
      if (!request.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ...base, choices: [{ index: 0, message: { role: "assistant", content: REPLY }, finish_reason: "stop" }], usage }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta, finish) => ({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });
      res.write(`data: ${JSON.stringify(chunk({ role: "assistant", content: REPLY }, null))}\n\n`);
      res.write(`data: ${JSON.stringify({ ...chunk({}, "stop"), usage })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
}

/** Runs the warm-up turn with `bin` (bin/nanobot.js); resolves to whether the turn succeeded. */
export async function warmCodeCache(bin) {
  const dir = mkdtempSync(join(tmpdir(), "nanobot-warm-"));
  const server = standInModel();
  try {
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address();
    const config = join(dir, "config.json");
    writeFileSync(
      config,
      JSON.stringify({
        providers: { custom: { apiBase: `http://127.0.0.1:${port}/v1`, apiKey: "warm-up" } },
        agents: { defaults: { model: "custom/warm-up", workspace: join(dir, "workspace") } },
      }),
    );
    // Only what the turn needs: the builder's NANOBOT_STORE_URL, OTEL_* or proxy settings must not
    // send the warm-up anywhere but this directory and the stand-in.
    const env = {
      PATH: process.env.PATH ?? "",
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      HOME: dir,
      NANOBOT_HOME: join(dir, "home"),
      NANOBOT_CONFIG: config,
      NO_COLOR: "1",
      NANOBOT_WRITE_CODE_CACHE: "1",
    };
    const child = spawn(process.execPath, [bin, "agent", "-m", "hi", "--no-stream"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const code = await new Promise((resolve) => child.on("close", resolve));
    if (code === 0 && output.includes(REPLY)) return true;
    process.stderr.write(`warm-code-cache: the warm-up turn failed (exit ${code}); the CLI works, its first starts may be slower\n${output}`);
    return false;
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
