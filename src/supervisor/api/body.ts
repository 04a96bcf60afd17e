import type { IncomingMessage } from "node:http";

// The request body as express' parsers give it to the real supervisor: express.json() (strict:
// objects and arrays only) and express.urlencoded(); any other type is left unread ({}).

const BODY_LIMIT = 10 * 1024 * 1024;

export class BodyError extends Error {}

/** The raw body; reading it is separate from parsing it, since the key is checked in between. */
export async function readRawBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new BodyError("request entity too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

// body-parser's createStrictSyntaxError: the text from the first character on is masked with
// `#`, parsed, and the masks in the message put back, so the message reads as JSON.parse's own.
function strictError(raw: string, first: string): BodyError {
  const index = raw.indexOf(first);
  const partial = raw.slice(0, index) + "#".repeat(raw.length - index);
  try {
    JSON.parse(partial);
  } catch (error) {
    const message = (error as Error).message.replace(/#+/g, (mask) => raw.slice(index, index + mask.length));
    return new BodyError(message);
  }
  return new BodyError("strict violation");
}

export function parseBody(raw: string, contentType: string): Record<string, unknown> {
  if (/\bjson\b/i.test(contentType)) {
    const first = /^[ \t\n\r]*([^ \t\n\r])/.exec(raw)?.[1];
    // An empty body is no body, as body-parser leaves it.
    if (first === undefined) return {};
    if (first !== "{" && first !== "[") throw strictError(raw, first);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      throw new BodyError((error as Error).message);
    }
    // An array carries no members the routes read.
    return Array.isArray(parsed) ? {} : (parsed as Record<string, unknown>);
  }
  if (/application\/x-www-form-urlencoded/i.test(contentType))
    return Object.fromEntries(new URLSearchParams(raw));
  return {};
}
