import { createRequire } from "node:module";

// The generated parser (scripts/build-odata-parser.mjs): the grammar of @balena/odata-parser with
// standard OData precedence and ascending default order. Its output, typed loosely on purpose:
// parse.ts checks every shape before anything else sees it.
export type Bind = readonly [string, unknown];
export type Binds = readonly Bind[] & Readonly<Record<string, Bind>>;
export interface RawTree {
  resource: unknown;
  key?: unknown;
  property?: unknown;
  link?: unknown;
  count?: boolean;
  options?: Record<string, unknown>;
}

interface GeneratedParser {
  parse(input: string): { tree: RawTree; binds: Binds };
  SyntaxError: new (...args: never[]) => Error & { location?: { start: { offset: number } } };
}

const require = createRequire(import.meta.url);
export const generatedParser = require("../../generated/odata-parser.cjs") as GeneratedParser;
