import type { Statement } from "./database.ts";

// SQL is built from fragments, never concatenated with values: `param` carries a value to a
// numbered placeholder, `ident` quotes a name (names come only from the model registry).
const fragmentBrand = Symbol("sql fragment");

type Part = string | { readonly value: unknown } | Fragment;

export interface Fragment {
  readonly [fragmentBrand]: true;
  readonly parts: readonly Part[];
}

function fragment(parts: readonly Part[]): Fragment {
  return { [fragmentBrand]: true, parts };
}

function isFragment(part: unknown): part is Fragment {
  return typeof part === "object" && part !== null && fragmentBrand in part;
}

/** sql`a = ${other}`: interpolations must be fragments (use `param` for values). */
export function sql(strings: TemplateStringsArray, ...fragments: Fragment[]): Fragment {
  const parts: Part[] = [];
  strings.forEach((text, i) => {
    if (text) parts.push(text);
    const next = fragments[i];
    if (next) parts.push(next);
  });
  return fragment(parts);
}

export function raw(text: string): Fragment {
  return fragment([text]);
}

export function ident(name: string): Fragment {
  return raw(`"${name.replaceAll('"', '""')}"`);
}

/** A bound value, with a cast so PostgreSQL never has to guess its type. */
export function param(value: unknown, cast: string): Fragment {
  return fragment([{ value }, `::${cast}`]);
}

export function join(fragments: readonly Fragment[], separator: string): Fragment {
  const parts: Part[] = [];
  fragments.forEach((item, i) => {
    if (i > 0) parts.push(separator);
    parts.push(item);
  });
  return fragment(parts);
}

/** Numbers the placeholders: the text holds $1…$n and no value. */
export function toStatement(root: Fragment): Statement {
  let text = "";
  const values: unknown[] = [];
  const walk = (item: Fragment) => {
    for (const part of item.parts) {
      if (typeof part === "string") text += part;
      else if (isFragment(part)) walk(part);
      else {
        values.push(part.value);
        text += `$${values.length}`;
      }
    }
  };
  walk(root);
  return { text, values };
}
