// Credentials never reach a log line: API keys (in `?apikey=` or a header), session tokens (JWTs),
// passwords, device and provisioning keys. Known places are redacted by structure (pino's `redact`
// paths, the request URL's query); every finished line is then scrubbed by pattern as well, for
// what reaches a log by way of an error message or a stack.

export const REDACTED = "[redacted]";

// A member or parameter whose name ends like one of these holds a credential: apikey, api_key,
// supervisor_api_key, deviceKey, token, access_token, password, jwt_secret, authorization …
const credentialName = String.raw`[\w-]*(?:key|token|passw(?:or)?d|secret|jwt|authorization)`;
const isCredentialName = new RegExp(`^${credentialName}$`, "i");

/** A copy of a JSON value with the value of every credential member replaced, at any depth. */
export function redactMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactMembers);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => [
      name,
      isCredentialName.test(name) && member !== null ? REDACTED : redactMembers(member),
    ]),
  );
}

/** The URL with the value of every credential in its query replaced. */
export function redactUrl(url: string): string {
  const start = url.indexOf("?");
  if (start < 0) return url;
  const hash = url.indexOf("#", start);
  const end = hash < 0 ? url.length : hash;
  const query = url
    .slice(start + 1, end)
    .split("&")
    .map((parameter) => {
      const equals = parameter.indexOf("=");
      const name = equals < 0 ? parameter : parameter.slice(0, equals);
      return isCredentialName.test(decodedName(name)) ? `${name}=${REDACTED}` : parameter;
    })
    .join("&");
  return `${url.slice(0, start)}?${query}${url.slice(end)}`;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, " "));
  } catch {
    return name;
  }
}

const patterns: readonly [RegExp, string][] = [
  // `apikey=…` in a URL or a form body, wherever it was written.
  [new RegExp(`(?<![\\w$-])(${credentialName})=[^&\\s"'\\\\#<>]+`, "gi"), `$1=${REDACTED}`],
  // An Authorization header's value, quoted in a message.
  [/\b(Bearer|ApiKey|Basic|Digest)(\s+)[^\s"'\\,;]+/gi, `$1$2${REDACTED}`],
  // Anything shaped like a JWT (a JSON header, base64url encoded, starts with `eyJ`).
  [/\beyJ[\w-]*\.[\w-]+\.[\w-]+/g, REDACTED],
  // A JSON member of the line itself: "password":"…".
  [new RegExp(`"(${credentialName})"\\s*:\\s*"(?:[^"\\\\]|\\\\.)*"`, "gi"), `"$1":"${REDACTED}"`],
  // A member quoted inside a string of the line (an error message quoting an object or JSON):
  // password: \"…\" or \"password\":\"…\".
  [
    new RegExp(`(\\\\")?\\b(${credentialName})(\\\\")?(\\s*[:=]\\s*)\\\\"(?:[^"\\\\]|\\\\\\\\)*\\\\"`, "gi"),
    `$1$2$3$4\\"${REDACTED}\\"`,
  ],
];

// Every pattern above needs one of these words; most lines have none, and one search is cheap.
const mayHoldCredential = /key|token|passw|secret|jwt|authorization|bearer|basic|digest|eyJ/i;

/** The text with every credential-shaped part replaced; JSON stays JSON. */
export function redactText(text: string): string {
  if (!mayHoldCredential.test(text)) return text;
  let redacted = text;
  for (const [pattern, replacement] of patterns) redacted = redacted.replace(pattern, replacement);
  return redacted;
}

/** Paths for pino's `redact`: headers and bodies that carry credentials, and database error fields that carry row values. */
export const redactPaths: readonly string[] = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "headers.cookie",
  "*.headers.authorization",
  "*.headers.cookie",
  "body.password",
  "*.body.password",
  "password",
  "*.password",
  "apikey",
  "*.apikey",
  "api_key",
  "*.api_key",
  "token",
  "*.token",
  // PGlite attaches the statement's bound values to its errors; PostgreSQL's detail quotes row
  // values ("Failing row contains (…)", "Key (…)=(…)").
  "err.params",
  "err.detail",
  "err.queryOptions",
  "err.cause.params",
  "err.cause.detail",
];
