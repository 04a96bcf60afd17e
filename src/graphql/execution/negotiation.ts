// Issue 47: a query is answered by the same statement whatever a client accepts; only the
// response's media type (and so its status codes) follows the Accept header. The choice is
// yoga's own (graphql-yoga 5, plugins/use-result-processor.js and result-processor/accept.js), so
// an answer written here and one yoga writes for the same request carry the same content type:
// - the header's media ranges are read without spaces, lower-cased, and those with a charset other
//   than utf-8 are dropped; no header is `*/*`; q-values are not weighed (yoga does not);
// - a single result goes to the last processor with a match, and the regular (JSON) processor is
//   the last: when any range matches `application/graphql-response+json` or `application/json`,
//   the answer is JSON, whatever else the header lists (`text/event-stream`, `multipart/mixed`);
// - among the JSON types, the first range of the header that matches decides, and a range that
//   matches both (`*/*`, `application/*`) gives `application/json`.

export type ResultMediaType = "application/json" | "application/graphql-response+json";

const JSON_TYPES: readonly ResultMediaType[] = ["application/graphql-response+json", "application/json"];

function matches(type: string, range: string): boolean {
  const [typeMain, typeSub] = type.split("/");
  const [main, sub] = range.split("/");
  return (main === "*" || main === typeMain) && (sub === "*" || sub === typeSub);
}

function negotiate(accept: string | undefined): ResultMediaType | undefined {
  const ranges = (accept || "*/*").replace(/\s/g, "").toLowerCase().split(",");
  let chosen: ResultMediaType | undefined;
  // Yoga walks the ranges last to first, so the first that matches is the last to set the choice.
  for (let at = ranges.length - 1; at >= 0; at--) {
    const [range, ...params] = (ranges[at] as string).split(";");
    const charset = params.find((param) => param.includes("charset=")) ?? "charset=utf-8";
    if (!range || charset !== "charset=utf-8") continue;
    for (const type of JSON_TYPES) if (matches(type, range)) chosen = type;
  }
  return chosen;
}

// Clients send a handful of distinct headers; any number of them may be sent, so only a few are kept.
const known = new Map<string | undefined, ResultMediaType | undefined>();
const KNOWN_HEADERS = 64;

/**
 * The JSON media type a single GraphQL result is answered in for `accept`; undefined when no JSON
 * type is acceptable (yoga answers: an event stream, multipart, or 406).
 */
export function resultMediaType(accept: string | undefined): ResultMediaType | undefined {
  if (known.has(accept)) return known.get(accept);
  const chosen = negotiate(accept);
  if (known.size < KNOWN_HEADERS) known.set(accept, chosen);
  return chosen;
}
