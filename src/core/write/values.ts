import { BadRequest } from "../../errors.ts";
import type { Field, Resource } from "../../model/types.ts";
import { LinkReference } from "../query.ts";

/** Validated field values of a write, by field name: numbers, strings, booleans, ISO timestamps, JSON or null. */
export type Values = Map<string, unknown>;

export type WriteMode = "create" | "update" | "replace";

// Every Int column is a PostgreSQL integer (int4).
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
// ISO 8601 as JSON carries it: a date, or a date and time with an optional fraction and offset.
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function coerce(resource: Resource, field: Field, value: unknown): unknown {
  const name = `'${field.name}'`;
  if (value === null) {
    if (!field.nullable) throw new BadRequest(`"${field.name}" cannot be null`);
    return null;
  }
  switch (field.type) {
    case "Integer":
      if (value instanceof LinkReference && field.link) return value;
      if (typeof value === "number" && Number.isInteger(value) && value >= INT_MIN && value <= INT_MAX)
        return value;
      throw new BadRequest(
        `${name} of ${resource.name} must be ${field.link ? `the id of a ${field.link}` : "an integer"}`,
      );
    case "Text":
      if (typeof value === "string") return value;
      throw new BadRequest(`${name} of ${resource.name} must be a string`);
    case "Boolean":
      if (typeof value === "boolean") return value;
      throw new BadRequest(`${name} of ${resource.name} must be true or false`);
    case "DateTime": {
      // pinejs takes a number as milliseconds since the epoch; the balena SDK and CLI send
      // `start_timestamp` that way (`Date.now()`).
      const date =
        typeof value === "string" && ISO_8601.test(value)
          ? new Date(value)
          : typeof value === "number" && Number.isFinite(value)
            ? new Date(value)
            : undefined;
      if (date && !Number.isNaN(date.getTime())) return date.toISOString();
      throw new BadRequest(
        `${name} of ${resource.name} must be an ISO 8601 date-time or milliseconds since 1970-01-01`,
      );
    }
    case "JSON":
      return value;
  }
}

/**
 * Checks a request body against what callers may write: a JSON object, known and writable fields,
 * values of the right type, required fields on create. `coercions` adapt the forms a field also accepts.
 */
export function validateBody(
  resource: Resource,
  body: unknown,
  mode: WriteMode,
  coercions: Readonly<Record<string, (value: unknown) => unknown>> = {},
): Values {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new BadRequest("The body must be a JSON object");
  }
  const allowed = mode === "create" ? resource.writability.create : resource.writability.update;
  const values: Values = new Map();
  for (const [name, raw] of Object.entries(body)) {
    // A hidden column is unknown to callers unless they may write it (a password).
    const field =
      resource.fields.get(name) ?? (allowed.includes(name) ? resource.hiddenFields.get(name) : undefined);
    if (!field) throw new BadRequest(`Unknown field '${name}' of ${resource.name}`);
    if (!allowed.includes(name)) throw new BadRequest(`'${name}' of ${resource.name} is not writable`);
    const adapt = coercions[name];
    values.set(name, coerce(resource, field, adapt ? adapt(raw) : raw));
  }
  if (mode === "create") {
    for (const name of resource.writability.required) {
      if (!values.has(name)) throw new BadRequest(`'${name}' is required to create a ${resource.name}`);
    }
  } else if (values.size === 0) {
    throw new BadRequest("No fields to update");
  }
  return values;
}
