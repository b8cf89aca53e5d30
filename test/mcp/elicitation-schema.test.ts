/**
 * The elicitation form schema: fields read from the flat primitive schema the MCP spec allows
 * (the everything server's full example), answers checked against it, typed text parsed.
 */
import { describe, expect, it } from "vitest";
import { describeProblems, fieldProblem, formFields, parseFieldInput, validateElicitationContent } from "../../src/mcp/elicitation-schema.js";
import type { ElicitField } from "../../src/mcp/elicitation-schema.js";

/** The shape server-everything's trigger-elicitation-request sends (trimmed descriptions). */
const EVERYTHING_FORM = {
  type: "object",
  properties: {
    name: { title: "String", type: "string", description: "Your full, legal name" },
    check: { title: "Boolean", type: "boolean" },
    email: { type: "string", format: "email" },
    birthdate: { type: "string", format: "date" },
    integer: { type: "integer", minimum: 1, maximum: 100, default: 42 },
    number: { type: "number", minimum: 0, maximum: 1000, default: 3.14 },
    untitledSingleSelectEnum: { type: "string", enum: ["Monica", "Rachel"], default: "Monica" },
    untitledMultipleSelectEnum: { type: "array", minItems: 1, maxItems: 2, items: { type: "string", enum: ["Guitar", "Piano", "Drums"] } },
    titledSingleSelectEnum: { type: "string", oneOf: [{ const: "hero-1", title: "Superman" }, { const: "hero-2", title: "Green Lantern" }] },
    titledMultipleSelectEnum: { type: "array", items: { anyOf: [{ const: "fish-1", title: "Tuna" }, { const: "fish-2", title: "Salmon" }] } },
    legacyTitledEnum: { type: "string", enum: ["pet-1", "pet-2"], enumNames: ["Cats", "Dogs"] },
  },
  required: ["name"],
};

const field = (name: string): ElicitField => formFields(EVERYTHING_FORM).find((f) => f.name === name)!;

describe("form fields", () => {
  it("reads every primitive kind, in order, with labels, requiredness, bounds and defaults", () => {
    const fields = formFields(EVERYTHING_FORM);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["name", "string", true],
      ["check", "boolean", false],
      ["email", "string", false],
      ["birthdate", "string", false],
      ["integer", "integer", false],
      ["number", "number", false],
      ["untitledSingleSelectEnum", "select", false],
      ["untitledMultipleSelectEnum", "multiselect", false],
      ["titledSingleSelectEnum", "select", false],
      ["titledMultipleSelectEnum", "multiselect", false],
      ["legacyTitledEnum", "select", false],
    ]);
    expect(field("name")).toMatchObject({ label: "String", description: "Your full, legal name" });
    expect(field("integer")).toMatchObject({ minimum: 1, maximum: 100, default: 42 });
    expect(field("titledSingleSelectEnum")).toMatchObject({ options: [{ value: "hero-1", label: "Superman" }, { value: "hero-2", label: "Green Lantern" }] });
    expect(field("legacyTitledEnum")).toMatchObject({ options: [{ value: "pet-1", label: "Cats" }, { value: "pet-2", label: "Dogs" }] });
    expect(field("titledMultipleSelectEnum")).toMatchObject({ options: [{ value: "fish-1", label: "Tuna" }, { value: "fish-2", label: "Salmon" }] });
  });
});

describe("checking an answer", () => {
  it("accepts a fitting answer", () => {
    const answer = { name: "Ada", check: true, email: "ada@example.com", birthdate: "1815-12-10", integer: 7, untitledMultipleSelectEnum: ["Piano"], legacyTitledEnum: "pet-2" };
    expect(validateElicitationContent(EVERYTHING_FORM, answer)).toEqual([]);
  });

  it("names each problem: missing required, wrong type, format, range, unknown option and field", () => {
    const problems = validateElicitationContent(EVERYTHING_FORM, {
      check: "yes",
      email: "not-an-email",
      birthdate: "10/12/1815",
      integer: 7.5,
      number: 5000,
      untitledSingleSelectEnum: "Joey",
      untitledMultipleSelectEnum: ["Piano", "Drums", "Guitar"],
      extra: 1,
    });
    expect(describeProblems(problems)).toBe(
      [
        "extra is not a field of this form",
        "name is required",
        "check must be true or false",
        "email must be an email address",
        "birthdate must be a date (YYYY-MM-DD)",
        "integer must be a whole number",
        "number must be at most 1000",
        "untitledSingleSelectEnum must be one of: Monica, Rachel",
        "untitledMultipleSelectEnum allows at most 2 choice(s)",
      ].join("; "),
    );
    expect(validateElicitationContent(EVERYTHING_FORM, "Ada")).toEqual([{ field: "", message: "the answer must be an object of field values" }]);
  });

  it("treats an empty required string as missing", () => {
    expect(validateElicitationContent(EVERYTHING_FORM, { name: "" })).toEqual([{ field: "name", message: "is required" }]);
  });
});

describe("parsing typed text", () => {
  it("turns text into typed values; blank takes the default", () => {
    expect(parseFieldInput(field("check"), "y")).toEqual({ value: true });
    expect(parseFieldInput(field("check"), "no")).toEqual({ value: false });
    expect(parseFieldInput(field("check"), "maybe")).toEqual({ error: "answer y or n" });
    expect(parseFieldInput(field("integer"), " 12 ")).toEqual({ value: 12 });
    expect(parseFieldInput(field("integer"), "")).toEqual({ value: 42 });
    expect(parseFieldInput(field("email"), "")).toEqual({ value: undefined });
    expect(parseFieldInput(field("number"), "abc")).toEqual({ error: "type a number" });
  });

  it("picks options by number, value or label", () => {
    expect(parseFieldInput(field("titledSingleSelectEnum"), "2")).toEqual({ value: "hero-2" });
    expect(parseFieldInput(field("titledSingleSelectEnum"), "superman")).toEqual({ value: "hero-1" });
    expect(parseFieldInput(field("legacyTitledEnum"), "pet-2")).toEqual({ value: "pet-2" });
    expect(parseFieldInput(field("untitledMultipleSelectEnum"), "1, drums")).toEqual({ value: ["Guitar", "Drums"] });
    expect(parseFieldInput(field("untitledMultipleSelectEnum"), "1, banjo")).toEqual({ error: "unknown option(s): banjo" });
    expect(fieldProblem(field("integer"), 500)).toBe("must be at most 100");
  });
});
