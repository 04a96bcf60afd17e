// Clients encode OData URLs two ways. pinejs-client sends structure raw and percent-encodes only the
// contents of string literals; a form encoder (URLSearchParams) encodes everything, `(` `,` `/` `$`
// included. The grammar reads the first form, so each query value is split off (on `&` and the first
// `=`), decoded once, and written back in that form: raw structure, encoded string contents.

function decode(text: string): string | undefined {
  try {
    // RFC 3986: `+` is a plus sign (form encoders must send a space as %20); outside a string the
    // grammar reads a `+` as a space, as it always has.
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** Re-encodes the contents of every '…' literal ('' stays the escaped quote); the rest stays raw. */
function encodeLiterals(value: string): string {
  return value.replace(
    /'((?:[^']|'')*)'/g,
    (_literal, contents: string) => `'${encodeURIComponent(contents)}'`,
  );
}

export function canonicalUrl(url: string): string {
  const mark = url.indexOf("?");
  if (mark < 0) return url;
  const query = url
    .slice(mark + 1)
    .split("&")
    .map((part) => {
      const equals = part.indexOf("=");
      if (equals < 0) return part;
      const name = decode(part.slice(0, equals));
      const value = decode(part.slice(equals + 1));
      // A malformed escape stays as sent, for the parser to reject with its position.
      if (name === undefined || value === undefined) return part;
      return `${name}=${encodeLiterals(value)}`;
    })
    .join("&");
  return `${url.slice(0, mark)}?${query}`;
}
