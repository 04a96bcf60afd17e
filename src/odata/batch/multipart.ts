import { BadRequest } from "../../errors.ts";

// MIME multipart framing (RFC 2046 §5.1) as OData 4.0's multipart batch uses it (Protocol §11.7.2):
// a body is a preamble, parts each opened by `--boundary` on its own line, and `--boundary--` closing
// them; each part is header lines, an empty line and content. The CRLF before a delimiter belongs to
// the delimiter. Lines end in CRLF as the RFC asks; a bare LF is accepted too, as OData services
// commonly do, since some clients write it. Anything else is refused with the reason: nothing is
// guessed.

export interface MimePart {
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly content: string;
}

const tchar = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;
// RFC 2046 §5.1.1: 1 to 70 characters of a restricted set, not ending in a space.
const boundaryChars = /^[0-9a-z'()+_,\-./:=? ]{0,69}[0-9a-z'()+_,\-./:=?]$/i;

/** A media type and its parameters (names in lower case), or undefined for a malformed one. */
export function mediaType(
  header: string | undefined,
): { type: string; params: Map<string, string> } | undefined {
  if (header === undefined) return undefined;
  const [head, ...rest] = splitParams(header);
  const type = head?.trim().toLowerCase() ?? "";
  if (!/^[^/\s]+\/[^/\s]+$/.test(type)) return undefined;
  const params = new Map<string, string>();
  for (const param of rest) {
    const eq = param.indexOf("=");
    if (eq < 0) return undefined;
    const name = param.slice(0, eq).trim().toLowerCase();
    let value = param.slice(eq + 1).trim();
    if (!tchar.test(name)) return undefined;
    if (value.startsWith('"')) {
      if (!value.endsWith('"') || value.length < 2) return undefined;
      value = value.slice(1, -1).replace(/\\(.)/g, "$1");
    }
    params.set(name, value);
  }
  return { type, params };
}

/** Splits `type; a=1; b="x;y"` at the semicolons outside quotes. */
function splitParams(header: string): string[] {
  const pieces: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < header.length; i++) {
    const c = header[i];
    if (c === '"' && header[i - 1] !== "\\") quoted = !quoted;
    else if (c === ";" && !quoted) {
      pieces.push(header.slice(start, i));
      start = i + 1;
    }
  }
  pieces.push(header.slice(start));
  return pieces.filter((piece, i) => i === 0 || piece.trim() !== "");
}

/** The boundary of a `multipart/mixed` Content-Type, or undefined if the type is another. */
export function mixedBoundary(contentType: string | undefined, where: string): string | undefined {
  const media = mediaType(contentType);
  if (media?.type !== "multipart/mixed") return undefined;
  const boundary = media.params.get("boundary");
  if (boundary === undefined) throw new BadRequest(`${where}: multipart/mixed needs a boundary parameter`);
  if (!boundaryChars.test(boundary))
    throw new BadRequest(`${where}: the boundary '${boundary}' is not 1 to 70 characters RFC 2046 allows`);
  return boundary;
}

/** Header lines up to the first empty line; the rest is the content. */
export function splitHeaders(text: string, where: string): { lines: string[]; content: string } {
  const lines: string[] = [];
  let at = 0;
  for (;;) {
    const end = text.indexOf("\n", at);
    if (end < 0) throw new BadRequest(`${where}: its headers are not followed by an empty line`);
    const line = text.slice(at, text[end - 1] === "\r" ? end - 1 : end);
    at = end + 1;
    if (line === "") return { lines, content: text.slice(at) };
    lines.push(line);
  }
}

/** `Name: value` lines as a record of lower-case names; a repeated header is refused. */
export function parseHeaderLines(lines: readonly string[], where: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).toLowerCase();
    if (colon <= 0 || !tchar.test(name)) throw new BadRequest(`${where}: '${line}' is not a header line`);
    if (name in headers) throw new BadRequest(`${where}: the header ${name} appears twice`);
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The parts of a multipart body; no part, or no closing delimiter, is a malformed body. */
export function parseMultipart(body: string, boundary: string, where: string): MimePart[] {
  const delimiter = `--${boundary}`;
  // Every delimiter line: at the very start, or after a line break; then optional white space.
  const lines = new RegExp(`(?:^|\\r?\\n)${escapeRegExp(delimiter)}(--)?[ \\t]*(?=\\r?\\n|$)`, "g");
  const parts: MimePart[] = [];
  let open: number | undefined;
  let closed = false;
  for (const match of body.matchAll(lines)) {
    if (open !== undefined) {
      const text = body.slice(open, match.index);
      const where_ = `${where}, part ${parts.length + 1}`;
      const { lines: headerLines, content } = splitHeaders(text, where_);
      parts.push({ headers: parseHeaderLines(headerLines, where_), content });
    }
    if (match[1] === "--") {
      closed = true;
      break;
    }
    // The part starts after the delimiter line's line break.
    const after = match.index + match[0].length;
    open = body.startsWith("\r\n", after) ? after + 2 : after + 1;
  }
  if (!closed) throw new BadRequest(`${where}: no closing delimiter --${boundary}--`);
  if (parts.length === 0) throw new BadRequest(`${where}: no part between the delimiters --${boundary}`);
  return parts;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A multipart body of the given parts (each its header lines and content), with CRLF lines. */
export function serializeMultipart(boundary: string, parts: readonly string[]): string {
  return `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join("")}--${boundary}--\r\n`;
}
