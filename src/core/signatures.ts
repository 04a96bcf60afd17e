import type { ExprType } from "./plan-types.ts";
import type { FunctionName, Literal } from "./query.ts";

// The types of a filter's values as the planner checks them: each type's category (what it compares
// with), each literal's type, and each function's arguments and result.

export type Category = "number" | "text" | "boolean" | "temporal" | "json" | "null";

export const categoryOf: Record<ExprType, Category> = {
  Integer: "number",
  Real: "number",
  Text: "text",
  Boolean: "boolean",
  DateTime: "temporal",
  Date: "temporal",
  JSON: "json",
  Null: "null",
};

export const literalType = (literal: Literal): ExprType => {
  switch (literal.kind) {
    case "number":
      return literal.real || !Number.isInteger(literal.value) ? "Real" : "Integer";
    case "text":
      return "Text";
    case "boolean":
      return "Boolean";
    case "datetime":
      return "DateTime";
    case "null":
      return "Null";
  }
};

// Each function's argument categories and result type.
export const signatures: Record<FunctionName, { args: Category[]; optional?: Category; returns: ExprType }> =
  {
    contains: { args: ["text", "text"], returns: "Boolean" },
    startswith: { args: ["text", "text"], returns: "Boolean" },
    endswith: { args: ["text", "text"], returns: "Boolean" },
    substringof: { args: ["text", "text"], returns: "Boolean" },
    tolower: { args: ["text"], returns: "Text" },
    toupper: { args: ["text"], returns: "Text" },
    trim: { args: ["text"], returns: "Text" },
    length: { args: ["text"], returns: "Integer" },
    indexof: { args: ["text", "text"], returns: "Integer" },
    concat: { args: ["text", "text"], returns: "Text" },
    substring: { args: ["text", "number"], optional: "number", returns: "Text" },
    replace: { args: ["text", "text", "text"], returns: "Text" },
    year: { args: ["temporal"], returns: "Integer" },
    month: { args: ["temporal"], returns: "Integer" },
    day: { args: ["temporal"], returns: "Integer" },
    hour: { args: ["temporal"], returns: "Integer" },
    minute: { args: ["temporal"], returns: "Integer" },
    second: { args: ["temporal"], returns: "Integer" },
    now: { args: [], returns: "DateTime" },
    date: { args: ["temporal"], returns: "Date" },
    round: { args: ["number"], returns: "Real" },
    floor: { args: ["number"], returns: "Real" },
    ceiling: { args: ["number"], returns: "Real" },
  };
