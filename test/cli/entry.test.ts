import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const entry = join(repo, "src/cli/entry.ts");
// The tsx loader by absolute URL: the child runs in a temp dir where a bare "tsx" would not resolve.
const tsxLoader = pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "nanobot-entry-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI as a user would: a separate node process. */
function nanobot(args: string[]) {
  return spawnSync(process.execPath, ["--import", tsxLoader, entry, ...args], {
    cwd: dir,
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: dir, NANOBOT_HOME: join(dir, "nb") },
    timeout: 20_000,
  });
}

describe("the nanobot process", () => {
  it("prints --version and exits 0", async () => {
    const { version } = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as { version: string };
    const r = nanobot(["--version"]);
    expect(r.stdout).toBe(`${version}\n`);
    expect(r.status).toBe(0);
  });

  it("exits 2 with one line naming the file and key for a bad config", async () => {
    await writeFile(join(dir, "bad.yaml"), "gateway:\n  port: -1\n");
    const r = nanobot(["config", "check", "--config", "bad.yaml"]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("error: bad.yaml: gateway.port: expected a port number (1-65535), got -1\n");
  });
});
