import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { fieldsToJsonSchema, toRequestOutput, validateStructuredOutput } from "../../src/providers/structured-output.js";

describe("fields shorthand → JSON Schema", () => {
  it("converts names, lists, types, enums and nested objects", () => {
    const schema = fieldsToJsonSchema({
      title: "the title",
      "tags[]": "labels",
      "count(int)": "how many",
      "score(number)": "",
      "done(bool)": "",
      "mood(happy, sad,angry)": "the mood",
      "levels(low,high)[]": "",
      author: { name: "full name", "emails[]": "" },
    });
    expect(schema).toEqual({
      type: "object",
      properties: {
        title: { type: "string", description: "the title" },
        tags: { type: "array", items: { type: "string", description: "labels" } },
        count: { type: "integer", description: "how many" },
        score: { type: "number" },
        done: { type: "boolean" },
        mood: { type: "string", enum: ["happy", "sad", "angry"], description: "the mood" },
        levels: { type: "array", items: { type: "string", enum: ["low", "high"] } },
        author: {
          type: "object",
          properties: { name: { type: "string", description: "full name" }, emails: { type: "array", items: { type: "string" } } },
          required: ["name", "emails"],
          additionalProperties: false,
        },
      },
      required: ["title", "tags", "count", "score", "done", "mood", "levels", "author"],
      additionalProperties: false,
    });
  });

  it("accepts a plain list of keys", () => {
    expect(fieldsToJsonSchema(["a", "b[]"])).toMatchObject({ properties: { a: { type: "string" }, b: { type: "array" } }, required: ["a", "b"] });
  });

  it("rejects a malformed key with a ConfigError", () => {
    expect(() => fieldsToJsonSchema({ "bad key!": "" })).toThrow(ConfigError);
  });

  it("toRequestOutput accepts fields, {schema} or a bare schema", () => {
    expect(toRequestOutput({ name: "r", fields: ["x"] })).toMatchObject({ name: "r", schema: { properties: { x: { type: "string" } } } });
    expect(toRequestOutput({ schema: { type: "object" } })).toEqual({ schema: { type: "object" } });
    expect(toRequestOutput({ type: "object", properties: {} })).toEqual({ schema: { type: "object", properties: {} } });
  });
});

describe("validating the final answer", () => {
  const schema = fieldsToJsonSchema({ city: "", "temp(int)": "", "sky(clear,cloudy)": "" });

  it("accepts a matching answer (also inside a ```json fence)", () => {
    expect(validateStructuredOutput('{"city":"Oslo","temp":3,"sky":"clear"}', schema)).toEqual({ ok: true, value: { city: "Oslo", temp: 3, sky: "clear" } });
    expect(validateStructuredOutput('```json\n{"city":"Oslo","temp":3,"sky":"clear"}\n```', schema).ok).toBe(true);
  });

  it("reports the failing path for a wrong type, enum or missing field", () => {
    const wrong = validateStructuredOutput('{"city":"Oslo","temp":"warm","sky":"rain"}', schema);
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.error).toMatch(/temp/);
    expect(!wrong.ok && wrong.error).toMatch(/sky/);
    const missing = validateStructuredOutput('{"city":"Oslo"}', schema);
    expect(!missing.ok && missing.error).toMatch(/temp/);
  });

  it("rejects extra properties and non-JSON", () => {
    expect(validateStructuredOutput('{"city":"a","temp":1,"sky":"clear","x":1}', schema).ok).toBe(false);
    const notJson = validateStructuredOutput("the city is Oslo", schema);
    expect(!notJson.ok && notJson.error).toMatch(/not valid JSON/);
  });
});
