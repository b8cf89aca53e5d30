/**
 * Issue 20's "Must show", from the Python nanobot's own schema. The fixtures are built by
 * scripts/python-config-fixtures.py from HKUDS/nanobot at 3852956a (nanobot/config/schema.py
 * and the tool config classes): template.json is `Config()` as the Python `nanobot onboard` writes it;
 * every-key.json sets every key of schema-keys.json to a non-default value the Python nanobot
 * accepts (the script validates it with the Python Config).
 *
 * A config using every key loads; `config check` names each key nanobot does not act on, with
 * its reason; every other key is listed in docs/python-config-keys.md with the test file that
 * shows its effect.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";
import { UNSUPPORTED_KEYS } from "../../src/config/python-keys.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

type Doc = Record<string, unknown>;
const fixture = async <T>(name: string): Promise<T> => JSON.parse(await readFile(new URL(`../fixtures/python-config/${name}`, import.meta.url), "utf8")) as T;
const repoFile = (path: string): URL => new URL(`../../${path}`, import.meta.url);

let root: string;
let workspace: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-python-schema-"));
  workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

async function run(doc: Doc, args: string[]): Promise<{ code: number; out: string; err: string }> {
  await writeFile(join(root, "config.json"), JSON.stringify(doc));
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { HOME: root, NANOBOT_HOME: join(root, "nb") },
    cwd: root,
  };
  const code = await main(["node", "nanobot", "--config", join(root, "config.json"), ...args], io);
  return { code, out, err };
}

/** Whether `doc` holds the dotted path (`*` = any entry). */
function has(doc: unknown, parts: string[]): boolean {
  if (parts.length === 0) return true;
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return false;
  const [head, ...rest] = parts as [string, ...string[]];
  const node = doc as Doc;
  return head === "*" ? Object.values(node).some((v) => has(v, rest)) : head in node && has(node[head], rest);
}

/** The UNSUPPORTED_KEYS entry covering a schema key (the key itself or a group above it). */
function unsupportedEntry(key: string) {
  const parts = key.split(".");
  return UNSUPPORTED_KEYS.find((e) => e.path.length <= parts.length && e.path.every((seg, i) => seg === "*" || parts[i] === "*" || seg === parts[i]));
}

/** What `config check` says about every-key.json: each line names the path(s) and the reason. */
const NAMED_IN_EVERY_KEY = [
  "agents.defaults.botName",
  "agents.defaults.botIcon",
  "channels.extractDocumentText",
  "channels.transcriptionProvider",
  "channels.transcriptionLanguage",
  "transcription.provider, transcription.model, transcription.language, transcription.maxDurationSec, transcription.maxUploadMb",
  "gateway.restartMode",
  "gateway.heartbeat.keepRecentMessages",
  "api.apiKey",
  "api.host",
  "api.port",
  "providers.custom.proxy",
  "providers.custom.thinkingStyle",
  "providers.lazyllm.displayName",
  "providers.bedrock.region",
  "providers.bedrock.profile",
  "tools.web.proxy",
  "tools.exec.sandboxRoBinds",
  "tools.exec.sandboxRwBinds",
  "tools.file.enable",
  "tools.cliApps.installTimeout, tools.cliApps.runTimeout, tools.cliApps.catalogTtlSeconds",
  "tools.my.allowSet",
  "tools.imageGeneration.enabled, tools.imageGeneration.defaultAspectRatio, tools.imageGeneration.defaultImageSize, tools.imageGeneration.maxImagesPerTurn, tools.imageGeneration.saveDir",
  "tools.maxSessionMessagesPerMinute",
  "tools.webuiAllowLocalServiceAccess",
  "tools.webuiAllowRemotePackageInstall",
  "tools.mcpServers.remote.auth",
];

/** Keys whose every-key value asks for what nanobot does anyway (named only for other values). */
const QUIET_IN_EVERY_KEY = ["channels.showReasoning", "tools.web.fetch.useJinaReader"];

describe("the Python nanobot's schema", () => {
  it("the Python template (Config() as `nanobot onboard` writes it) loads with no warnings", async () => {
    const template = await fixture<Doc>("template.json");
    const r = await run(template, ["config", "check"]);
    expect(r.code).toBe(0);
    expect(r.err).toBe(`ok: ${join(root, "config.json")}\n`);
  });

  it("a config.json using every key loads, and config check names each key nanobot does not act on with its reason", async () => {
    const keys = await fixture<string[]>("schema-keys.json");
    const every = await fixture<Doc>("every-key.json");
    expect(keys.length).toBeGreaterThan(100);
    for (const key of keys) expect(has(every, key.split(".")), key).toBe(true);
    ((every.agents as Doc).defaults as Doc).workspace = workspace;

    const r = await run(every, ["config", "check"]);
    expect(r.code).toBe(0);
    expect(r.err).not.toContain("unknown key");
    const lines = r.err.split("\n").filter((l) => l.includes("not supported by nanobot (TS)"));
    expect(lines).toHaveLength(NAMED_IN_EVERY_KEY.length);
    for (const named of NAMED_IN_EVERY_KEY) {
      const entry = unsupportedEntry(named.split(", ")[0]!.replace(/^(providers|tools\.mcpServers)\.[^.]+/, "$1.*"));
      expect(entry, named).toBeDefined();
      expect(lines, named).toContain(`warning: ${join(root, "config.json")}: ${named}: not supported by nanobot (TS): ${entry!.reason}`);
    }
    for (const key of QUIET_IN_EVERY_KEY) expect(r.err).not.toContain(key);
    // Nothing it names reappears in the resolved config as if it were in effect.
    expect(r.out).not.toContain("3128");
    expect(r.out).not.toContain("restartMode");
  });

  it("a turn runs on that config: its model preset reaches the wire", async () => {
    const every = await fixture<Doc>("every-key.json");
    const defaults = (every.agents as Doc).defaults as Doc;
    defaults.workspace = workspace;
    const custom = (every.providers as Doc).custom as Doc;
    custom.apiBase = fake.openaiBaseURL;
    // Its MCP servers stand for a real user's and are not running here.
    (every.tools as Doc).mcpServers = {};
    fake.enqueue({ text: "hello from the fast preset" });
    const r = await run(every, ["agent", "-m", "hi"]);
    expect(r).toMatchObject({ code: 0, out: "hello from the fast preset\n" });
    // modelPreset "fast": its model and settings; extraBody and extraQuery on the request.
    expect(fake.requests[0]?.body).toMatchObject({ model: "test-fast", max_tokens: 2048, temperature: 0.5, reasoning_effort: "low", top_k: 20 });
    expect(fake.requests[0]?.query).toBe("?api-version=2024-10-21");
    expect(fake.requests[0]?.headers["x-team"]).toBe("core");
  });

  it("every other key is listed in docs/python-config-keys.md with the test files that show its effect", async () => {
    const keys = await fixture<string[]>("schema-keys.json");
    const rows = honouredRows(await readFile(repoFile("docs/python-config-keys.md"), "utf8"));
    const honoured = keys.filter((k) => !unsupportedEntry(k));
    expect(honoured.length).toBeGreaterThan(60);
    for (const key of honoured) {
      const row = rows.find((r) => r.keys.includes(key));
      expect(row, `${key} has no honoured row`).toBeDefined();
      expect(row!.tests.length, `${key} names no test`).toBeGreaterThan(0);
      const sources = await Promise.all(row!.tests.map((t) => readFile(repoFile(t), "utf8")));
      // The test that proves a key names it (camelCase or snake_case, or its wire/CLI form).
      const last = key.split(".").at(-1)!;
      const spellings = [last, last.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), ...row!.also];
      expect(
        sources.some((src) => spellings.some((s) => src.includes(s))),
        `${key}: none of ${row!.tests.join(", ")} mentions ${spellings.join(" / ")}`,
      ).toBe(true);
    }
  });
});

interface HonouredRow {
  keys: string[];
  tests: string[];
  /** Other spellings the proving test uses (a preset's `maxTokens` is `max_tokens` on the wire). */
  also: string[];
}

/**
 * The doc's tables: `## <prefix>` headings, rows `| keys | status | tests |`. Key cells hold
 * code spans relative to the heading (`<name>` = any entry); the tests cell holds test paths.
 */
function honouredRows(doc: string): HonouredRow[] {
  const out: HonouredRow[] = [];
  let prefix = "";
  for (const line of doc.split("\n")) {
    const heading = /^## `([^`]+)`/.exec(line);
    if (heading) {
      prefix = heading[1]!.replace(/<name>/g, "*");
      continue;
    }
    if (!line.startsWith("| `")) continue;
    const [keysCell = "", status = "", testsCell = ""] = line.split("|").slice(1).map((c) => c.trim());
    if (!status.startsWith("honoured")) continue;
    const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    out.push({
      keys: spans(keysCell).map((k) => (prefix ? `${prefix}.${k.replace(/<name>/g, "*")}` : k.replace(/<name>/g, "*"))),
      tests: spans(testsCell).filter((t) => t.startsWith("test/")),
      also: spans(testsCell).filter((t) => !t.startsWith("test/")),
    });
  }
  return out;
}
