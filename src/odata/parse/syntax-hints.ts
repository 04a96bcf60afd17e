import { functionNames } from "../../core/query.ts";

// After the grammar has rejected a URL, find the token a person would name as the problem: an
// unknown option or function, or a bad $top. This only words the 400; it never accepts anything.

const options = new Set([
  "$filter",
  "$select",
  "$expand",
  "$orderby",
  "$top",
  "$skip",
  "$count",
  "$format",
  "$inlinecount",
]);
// Everything the grammar calls with parentheses: our functions, the grammar's others (which we
// refuse by name later), and its keywords. Anything else before "(" is an unknown function.
const callables = new Set<string>([
  ...functionNames,
  ...[
    "fractionalseconds",
    "totalseconds",
    "totaloffsetminutes",
    "time",
    "maxdatetime",
    "mindatetime",
    "cast",
    "isof",
  ],
  ...["not", "in", "any", "all", "datetime", "date", "duration"],
]);

function withoutStrings(text: string): string {
  return text.replace(/%27/gi, "'").replace(/'(?:[^']|'')*'/g, "''");
}

export function explainSyntaxError(url: string): string | undefined {
  const query = url.includes("?") ? url.slice(url.indexOf("?") + 1) : "";
  const text = withoutStrings(query);
  for (const part of text.split("&")) {
    const equals = part.indexOf("=");
    const name = (equals < 0 ? part : part.slice(0, equals)).replace(/^%24/i, "$");
    const value = equals < 0 ? "" : part.slice(equals + 1);
    if (name.startsWith("$") && !options.has(name)) return `Query option ${name} is not supported`;
    if ((name === "$top" || name === "$skip") && !/^\d+$/.test(value))
      return `${name} must be a non-negative integer`;
  }
  for (const match of text.matchAll(/\$([A-Za-z]+)=/g)) {
    if (!options.has(`$${match[1]}`)) return `Query option $${match[1]} is not supported`;
  }
  for (const match of text.matchAll(/(?:^|[^\w/$@.])([A-Za-z_][\w.]*)\(/g)) {
    const name = match[1] as string;
    if (!callables.has(name)) return `Function '${name}' is not supported`;
  }
  return undefined;
}
