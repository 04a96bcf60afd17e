// A URL's shape: the URL with the literal values a client varies from request to request cut out,
// so requests that differ only in those values share one compiled statement (../core/statement-cache.ts).
// Deliberately narrow: only literals whose meaning cannot depend on their value are cut out, and a
// URL with anything unusual in a literal has no shape (it takes the full path). Whether a shape's
// literals really are plain bound values is proven when its statement is learnt, not assumed here.

/** A literal cut out of a URL, as sent. */
export type SlotLiteral =
  | { readonly kind: "string"; readonly raw: string }
  | { readonly kind: "integer"; readonly raw: string };

export interface UrlShape {
  /** The URL with each literal replaced by a mark of its kind. */
  readonly key: string;
  readonly literals: readonly SlotLiteral[];
}

// Marks no URL contains: a request carries no raw NUL.
const MARK = "\u0000";
const STRING_MARK = `${MARK}s`;
const INTEGER_MARK = `${MARK}i`;
const marks = new RegExp(`${MARK}[si]`, "g");

// The contents of a string literal that decode one way only: unreserved characters and
// percent-escapes, but no escaped quote (the parser's quote rules) and no `+` (read as a space in
// some positions).
const plainContents = /^(?:[A-Za-z0-9._~-]|%(?!27)[0-9A-Fa-f]{2})*$/;
const INT4_MAX = 2_147_483_647;

// A comparison operator and its separator just before a literal: `eq 5`, `eq%205`, `eq+5`.
const afterComparison = /(?:^|[ +(]|%20)(?:eq|ne|gt|ge|lt|le)(?: |\+|%20)$/;

const isNameCharacter = (character: string | undefined) =>
  character !== undefined && /[A-Za-z0-9_.$@]/.test(character);

function quoteAt(url: string, at: number): number {
  if (url[at] === "'") return 1;
  if (url[at] === "%" && url[at + 1] === "2" && url[at + 2] === "7") return 3;
  return 0;
}

/**
 * The shape of `url` (the part after the version), or undefined when it has none: a string literal
 * with contents that are not plain, a typed literal (`datetime'…'`), an unterminated quote.
 * String literals are cut out wherever they are; integers only where they stand for a value on
 * their own: a key (`device(5)`, `device(id=5)`) or the right side of a comparison (`id eq 5`), never
 * in `$top`, `$skip`, arithmetic or a function's arguments, and only within PostgreSQL's int4.
 */
export function shapeOf(url: string): UrlShape | undefined {
  const literals: SlotLiteral[] = [];
  const query = url.indexOf("?");
  let key = "";
  let at = 0;
  let copied = 0;
  while (at < url.length) {
    const quote = quoteAt(url, at);
    if (quote) {
      if (/[A-Za-z]/.test(url[at - 1] ?? "")) return undefined;
      let end = at + quote;
      while (end < url.length && !quoteAt(url, end)) end++;
      const closing = quoteAt(url, end);
      // Unterminated, or an escaped quote ('') inside: the literal is not plain.
      if (!closing || quoteAt(url, end + closing)) return undefined;
      const raw = url.slice(at + quote, end);
      if (!plainContents.test(raw)) return undefined;
      literals.push({ kind: "string", raw });
      key += `${url.slice(copied, at + quote)}${STRING_MARK}`;
      copied = end;
      at = end + closing;
      continue;
    }
    const character = url[at] as string;
    if (character === "%") {
      // A percent-escape is one character: its hex digits are not a number.
      at += 3;
      continue;
    }
    const startsNumber =
      (character >= "0" && character <= "9") ||
      (character === "-" && url[at + 1] !== undefined && /[0-9]/.test(url[at + 1] as string));
    // A digit after a percent-escape (`%20`) starts a number; inside a name it does not.
    const escaped = url[at - 3] === "%";
    if (startsNumber && (escaped || !isNameCharacter(url[at - 1]))) {
      let end = at + 1;
      while (end < url.length && /[0-9]/.test(url[end] as string)) end++;
      const raw = url.slice(at, end);
      const before = url.slice(0, at);
      const inPath = query < 0 || at < query;
      const standsAlone =
        !isNameCharacter(url[end]) &&
        url[end] !== "-" &&
        (afterComparison.test(before) || (inPath && (url[at - 1] === "(" || url[at - 1] === "=")));
      if (standsAlone && Math.abs(Number(raw)) <= INT4_MAX) {
        literals.push({ kind: "integer", raw });
        key += `${url.slice(copied, at)}${INTEGER_MARK}`;
        copied = end;
      }
      at = end;
      continue;
    }
    at++;
  }
  return { key: key + url.slice(copied), literals };
}

/** The value a literal binds: what the parser reads it as (checked when a shape is learnt). */
export function literalValue(literal: SlotLiteral): string | number | undefined {
  if (literal.kind === "integer") return Number(literal.raw);
  try {
    return decodeURIComponent(literal.raw);
  } catch {
    return undefined;
  }
}

/** `url` with its literals replaced, in order, by `values` (strings of plain characters, integers). */
export function withLiterals(shape: UrlShape, values: readonly (string | number)[]): string {
  let index = 0;
  return shape.key.replace(marks, () => String(values[index++]));
}
