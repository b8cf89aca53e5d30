import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BUILTIN_SKILLS_DIR, loadSkills, mentionedSkills, skillsPrompt } from "../../src/memory/skills.js";

let root: string;
let workspace: string;
let builtin: string;
let bin: string;

async function skill(dir: string, name: string, frontMatter: string, body = `Do ${name} things.`): Promise<void> {
  await mkdir(join(dir, name), { recursive: true });
  await writeFile(join(dir, name, "SKILL.md"), `---\n${frontMatter}\n---\n\n${body}\n`);
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-skills-"));
  workspace = join(root, "ws");
  builtin = join(root, "builtin");
  bin = join(root, "bin");
  await mkdir(join(workspace, "skills"), { recursive: true });
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, "present-tool"), "#!/bin/sh\n");
  await chmod(join(bin, "present-tool"), 0o755);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("skills", () => {
  it("lists a skill whose binary is missing as unavailable, naming what it needs", async () => {
    await skill(join(workspace, "skills"), "video", 'description: Cut videos\nmetadata:\n  nanobot:\n    requires:\n      bins: [ffmpeg-not-installed]');
    await skill(join(workspace, "skills"), "local", 'description: Uses a present tool\nmetadata: \'{"nanobot":{"requires":{"bins":["present-tool"],"env":["LOCAL_KEY"]}}}\'');
    const skills = loadSkills({ workspace, builtinDir: builtin, env: { PATH: bin, LOCAL_KEY: "x" } });
    expect(skills.map((s) => [s.name, s.available, s.missing])).toEqual([
      ["local", true, []],
      ["video", false, ["bin:ffmpeg-not-installed"]],
    ]);
    expect(skillsPrompt(skills)).toContain("- video (unavailable: needs bin:ffmpeg-not-installed): Cut videos");
    const noEnv = loadSkills({ workspace, builtinDir: builtin, env: { PATH: bin } });
    expect(noEnv.find((s) => s.name === "local")?.missing).toEqual(["env:LOCAL_KEY"]);
  });

  it("a workspace skill overrides the built-in one; the folder name is the skill name", async () => {
    await skill(builtin, "summarize", "name: other\ndescription: built-in summary");
    await skill(join(workspace, "skills"), "summarize", "description: my summary");
    const skills = loadSkills({ workspace, builtinDir: builtin, env: {} });
    expect(skills).toHaveLength(1);
    expect(skills[0]).toMatchObject({ name: "summarize", description: "my summary", source: "workspace" });
  });

  it("always-skills go into the prompt in full; $name mentions pick skills; disabled ones vanish", async () => {
    await skill(builtin, "memory", "description: remember\nalways: true", "Keep MEMORY.md tidy.");
    await skill(builtin, "summarize", "description: summarise");
    const skills = loadSkills({ workspace, builtinDir: builtin, env: {} });
    const prompt = skillsPrompt(skills);
    expect(prompt).toContain("## Skill: memory\n\nKeep MEMORY.md tidy.");
    expect(prompt).toContain("- summarize: summarise (read ");
    expect(mentionedSkills("please $summarize this and $unknown", skills).map((s) => s.name)).toEqual(["summarize"]);
    expect(loadSkills({ workspace, builtinDir: builtin, env: {}, disabled: ["memory"] }).map((s) => s.name)).toEqual(["summarize"]);
  });

  it("ships built-in skills with descriptions", () => {
    const skills = loadSkills({ workspace, builtinDir: BUILTIN_SKILLS_DIR, env: {} });
    expect(skills.map((s) => s.name)).toEqual(expect.arrayContaining(["cron", "memory", "skill-creator", "summarize"]));
    for (const s of skills) expect(s.description).not.toBe("");
  });
});
