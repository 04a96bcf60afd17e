import type { FastifyInstance } from "fastify";
import { BadRequest } from "../errors.ts";

// Invalid UTF-8 (an encoded lone surrogate included) is refused, not decoded to U+FFFD.
const utf8 = new TextDecoder("utf-8", { fatal: true });
// A `\uD800`–`\uDFFF` escape: the only way a lone surrogate gets into well-formed UTF-8 JSON.
const surrogateEscape = /\\u[dD][89a-fA-F]/;
// In a `u` regular expression a well-formed pair is one code point: only a lone half matches.
const loneSurrogate = /\p{Surrogate}/u;

/**
 * JSON request bodies, for every route: fastify's own (prototype-poisoning-safe) parser, after
 * checking the bytes are UTF-8, and before handing on a string that is not Unicode text (a lone
 * UTF-16 surrogate, which the database would silently store as U+FFFD).
 */
export function useJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(new BadRequest("The body is not valid UTF-8"), undefined);
      return;
    }
    // Some clients send `content-type: application/json` on a DELETE without a body: that is no
    // body, not a malformed one.
    if (text === "") {
      done(null, undefined);
      return;
    }
    parseJson(request, text, (error, value) => {
      if (error) return done(error, undefined);
      const where = surrogateEscape.test(text) ? loneSurrogateAt(value, []) : undefined;
      if (where) done(new BadRequest(loneSurrogateMessage(where)), undefined);
      else done(null, value);
    });
  });
}

// Where a lone surrogate was found: a value (or a field name) at this path of field names and indexes.
interface Found {
  readonly path: readonly string[];
  readonly in: "value" | "field name";
}

function loneSurrogateMessage({ path, in: where }: Found): string {
  const field = `the body's field ${path.join(".").replaceAll(".[", "[")}`;
  const subject =
    where === "value"
      ? path.length === 0
        ? "The body"
        : field.replace(/^t/, "T")
      : path.length === 0
        ? "A field name in the body"
        : `A field name inside ${field}`;
  return `${subject} holds a lone UTF-16 surrogate, which is not Unicode text`;
}

/** The first string (a value or a field name) in `value` that is not Unicode text. */
function loneSurrogateAt(value: unknown, path: readonly string[]): Found | undefined {
  if (typeof value === "string") return loneSurrogate.test(value) ? { path, in: "value" } : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = loneSurrogateAt(item, [...path, `[${index}]`]);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (loneSurrogate.test(key)) return { path, in: "field name" };
    const found = loneSurrogateAt(item, [...path, key]);
    if (found) return found;
  }
  return undefined;
}
