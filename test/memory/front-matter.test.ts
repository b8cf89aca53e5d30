import { describe, expect, it } from "vitest";
import { parseFrontMatter } from "../../src/memory/front-matter.js";

describe("SKILL.md front-matter", () => {
  it("reads flat key: value lines with YAML's scalar meanings", () => {
    expect(parseFrontMatter("name: cron\ndescription: Schedule reminders, daily or weekly.\nalways: true\npriority: 2\nicon: ~")).toEqual({
      name: "cron",
      description: "Schedule reminders, daily or weekly.",
      always: true,
      priority: 2,
      icon: null,
    });
  });

  it("reads quoted strings and the inline JSON metadata the Python nanobot writes", () => {
    const meta = parseFrontMatter(`name: "weather"\nsummary: 'short'\nmetadata: {"nanobot": {"requires": {"bins": ["curl"]}}}`);
    expect(meta).toEqual({ name: "weather", summary: "short", metadata: { nanobot: { requires: { bins: ["curl"] } } } });
  });

  it("hands nested mappings, lists, block scalars and comments to the YAML parser", () => {
    expect(parseFrontMatter("name: x\nmetadata:\n  nanobot:\n    always: true")).toEqual({ name: "x", metadata: { nanobot: { always: true } } });
    expect(parseFrontMatter("tags:\n  - a\n  - b")).toEqual({ tags: ["a", "b"] });
    expect(parseFrontMatter("description: |\n  line one\n  line two")).toEqual({ description: "line one\nline two\n" });
    expect(parseFrontMatter("name: x # the name")).toEqual({ name: "x" });
    // ": " inside a plain scalar is a nested mapping to YAML, i.e. an error, as the parser says.
    expect(parseFrontMatter("description: when: daily")).toEqual({});
  });

  it("agrees with the YAML parser on flat values it reads itself", async () => {
    const { parse } = await import("yaml");
    for (const text of ["a: 1.5", "a: -3", "a: false", "a: null", "a: plain text, with commas", 'a: "esc\\"aped"', "a: 'single'", "a: [1, 2]", "a:"]) {
      expect(parseFrontMatter(text), text).toEqual(parse(text));
    }
  });

  it("reads broken front-matter as empty instead of failing the skill", () => {
    expect(parseFrontMatter("name: [unclosed")).toEqual({});
    expect(parseFrontMatter("- just\n- a list")).toEqual({});
  });
});
