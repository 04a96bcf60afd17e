// Where a refusal becomes its wire answer (issue 49): a refusal is an error of the classes
// Unauthorized, Forbidden or NotFound (src/errors.ts) or of a class of src/ that extends one of them
// (the core's RowNotWritable, the proxy's NotAUser, …). Each surface answers it in its own
// renderer only: the HTTP one (src/http/errors.ts) with the surface's rule (src/<surface>/refusals.ts),
// or GraphQL's (src/graphql/errors.ts). Checked on the code (comments left out):
// - outside the renderers, no statement tests an error for a refusal class (`instanceof`) and makes
//   a new error: a refusal answered as another (a 403 made a 401, a 404 a 500) is a renderer's job;
// - the core names no protocol's answer to a refusal, not even in a comment: neither 401 nor 403,
//   nor Unauthorized (the core knows rights, not credentials: it refuses with Forbidden or NotFound).

/** A source file of src/: its path, its whole text, and its code without comments. */
export interface Source {
  readonly file: string;
  readonly text: string;
  readonly code: string;
}

const BASE_REFUSALS = ["Unauthorized", "Forbidden", "NotFound"];

/** The refusal classes: the three of src/errors.ts and every class that extends one, at any depth. */
export function refusalClasses(sources: readonly Source[]): Set<string> {
  const parents = new Map<string, string>();
  for (const { code } of sources)
    for (const [, name, parent] of code.matchAll(/\bclass\s+(\w+)\s+extends\s+(\w+)/g))
      parents.set(name as string, parent as string);
  const refusals = new Set(BASE_REFUSALS);
  let grown = true;
  while (grown) {
    grown = false;
    for (const [name, parent] of parents)
      if (refusals.has(parent) && !refusals.has(name)) {
        refusals.add(name);
        grown = true;
      }
  }
  return refusals;
}

/** Statements outside the renderers that answer a refusal as another error: `file: instanceof X … new Y`. */
export function refusalsAnsweredOutside(
  sources: readonly Source[],
  isRenderer: (file: string) => boolean,
): string[] {
  const refusals = refusalClasses(sources);
  const found: string[] = [];
  for (const { file, code } of sources) {
    if (isRenderer(file)) continue;
    // From the test to the end of its statement: a new error made there answers the refusal.
    for (const [, tested, made] of code.matchAll(/\binstanceof\s+(\w+)\b[^;]*?\bnew\s+(\w+)\s*\(/g))
      if (refusals.has(tested as string)) found.push(`${file}: instanceof ${tested} … new ${made}`);
  }
  return found;
}

/** Files of the core that name a protocol's answer to a refusal: `file: 401` (comments included). */
export function protocolAnswersInCore(sources: readonly Source[]): string[] {
  const found: string[] = [];
  for (const { file, text } of sources) {
    if (!file.startsWith("src/core/")) continue;
    for (const word of new Set(text.match(/\b(?:401|403|Unauthorized)\b/g) ?? []))
      found.push(`${file}: ${word}`);
  }
  return found;
}
