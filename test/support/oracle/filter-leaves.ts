import fc from "fast-check";
import { type Node, textLiteral } from "./filter-ast.ts";
import { schema, type TableName, type Ty } from "./filter-schema.ts";
import { parseDecimal } from "./rational.ts";

// The leaves of generated filters: literals from pools that hit the data's edges, and the paths a
// scope can name.

const INT_MAX = 2147483647;

export const intLiteral = (n: number): Node => ({
  k: "lit",
  ty: "int",
  text: String(n),
  value: parseDecimal(String(n)),
});
export const decLiteral = (text: string): Node => ({ k: "lit", ty: "dec", text, value: parseDecimal(text) });

/** Values the data holds (so comparisons hit), the integer limits and their neighbours, and randoms. */
const intPool = [0, 1, -1, 2, 3, 7, 10, 35, 42, 50, 100, 256, 999, 1024, 2048, 12345, 987654];
const intEdges = [INT_MAX, -INT_MAX - 1, INT_MAX + 1, -INT_MAX - 2, INT_MAX - 1, 4294967296, -4294967296];
export const intLiterals = fc
  .oneof(
    { arbitrary: fc.constantFrom(...intPool), weight: 4 },
    { arbitrary: fc.constantFrom(...intEdges), weight: 2 },
    { arbitrary: fc.integer({ min: -2000, max: 2000 }), weight: 2 },
  )
  .map(intLiteral);

/** Never zero: a divisor the oracle can evaluate everywhere. */
export const nonZeroIntLiterals = intLiterals.filter((node) => node.k === "lit" && node.text !== "0");

const decPool = [
  "2.0",
  "0.5",
  "-1.5",
  "20.5",
  "0.25",
  "1.0",
  "0.0",
  "100.125",
  "-0.5",
  "2147483647.5",
  "3.14159",
  "42.0",
  "-2147483648.0",
];
export const decLiterals = fc
  .oneof(
    fc.constantFrom(...decPool),
    fc.tuple(fc.integer({ min: -5000, max: 5000 }), fc.integer({ min: 0, max: 99 })).map(([whole, cents]) => {
      const sign = whole < 0 ? "-" : "";
      return `${sign}${Math.abs(whole)}.${String(cents).padStart(2, "0")}`;
    }),
  )
  .map(decLiteral);

/** Divisors whose quotients terminate in a few decimal places, so `numeric` division is exact. */
export const niceDecDivisors = fc
  .constantFrom("2.0", "0.5", "-4.0", "2.5", "0.25", "1.0", "5.0", "-0.2", "10.0", "8.0")
  .map(decLiteral);
export const niceIntDivisors = fc.constantFrom(2, -2, 4, 5, 10, 1, -1, 8).map(intLiteral);

/** The data's strings and their pieces, so equality and containment hit. */
const textPool = [
  "",
  " ",
  "x",
  "shared",
  "Kitchen Light",
  "  padded  ",
  "café",
  "cafe\u0301",
  "😀",
  "a😀b😀c",
  "O'Brien & co/100%",
  "'",
  "''",
  "%",
  "_",
  "\\",
  "\u00a0",
  "\t",
  "\u3000",
  "Idle",
  "idle",
  "Downloading",
  "configuring",
  "offline",
  "updating",
  "inactive",
  "alpha",
  "location",
  "k",
  "secret-prefix-XYZ",
  "secret",
  "Beta fleet ’",
  "acme",
  "alice",
];
const asciiPool = textPool.filter((text) => /^[\x20-\x7e\t]*$/.test(text));
const chars = [
  "a",
  "b",
  "A",
  "Z",
  " ",
  "\t",
  "\u00a0",
  "%",
  "_",
  "'",
  "\\",
  "😀",
  "é",
  "e",
  "\u0301",
  "ß",
  "İ",
  "\u3000",
  "\ufeff",
  "\n",
  "x",
  "1",
  "-",
  "/",
  "k",
];
const asciiChars = chars.filter((c) => /^[\x20-\x7e\t\n]$/.test(c));

export function textLiterals(ascii: boolean): fc.Arbitrary<Node> {
  const pool = ascii ? asciiPool : textPool;
  const pieces = ascii ? asciiChars : chars;
  return fc
    .oneof(
      { arbitrary: fc.constantFrom(...pool), weight: 3 },
      {
        arbitrary: fc.array(fc.constantFrom(...pieces), { maxLength: 4 }).map((cs) => cs.join("")),
        weight: 2,
      },
    )
    .map(textLiteral);
}

const DAY = 86_400_000;
const timePool = [
  "2025-01-01T00:00:00.000Z",
  "2024-02-29T23:59:59.999Z",
  "2025-06-15T13:45:30.123Z",
  "1970-01-01T00:00:00.000Z",
  "1969-12-31T23:59:59.999Z",
  "2000-03-01T00:00:00.500Z",
  "2099-12-31T23:59:59.000Z",
  "1900-01-01T00:00:00.000Z",
  "2023-03-03T03:03:03.333Z",
];
const timeMs = fc.oneof(
  fc.constantFrom(...timePool.map((iso) => Date.parse(iso))),
  fc.integer({ min: Date.parse("1899-01-01T00:00:00Z"), max: Date.parse("2100-01-01T00:00:00Z") }),
);
/** `datetime'…'`, or `date'…'` (midnight UTC, a date-time to the server). */
export const timeLiterals = fc.oneof(
  timeMs.map(
    (ms): Node => ({ k: "lit", ty: "time", text: `datetime'${new Date(ms).toISOString()}'`, value: ms }),
  ),
  timeMs.map((ms): Node => {
    const day = Math.floor(ms / DAY) * DAY;
    return { k: "lit", ty: "time", text: `date'${new Date(day).toISOString().slice(0, 10)}'`, value: day };
  }),
);

export const boolLiterals = fc
  .boolean()
  .map((b): Node => ({ k: "lit", ty: "bool", text: String(b), value: b }));

/** Where bare names resolve, and the lambda variables in scope. */
export interface Ctx {
  readonly table: TableName;
  readonly vars: readonly { readonly name: string; readonly table: TableName }[];
}

const fieldsOf = (table: TableName, ty: Ty, asciiOnly: boolean) =>
  Object.entries(schema[table].fields)
    .filter(([name, t]) => t === ty && (!asciiOnly || schema[table].ascii.includes(name)))
    .map(([name]) => name);

/** Every path of type `ty` from a table: its fields, and through up to two to-one links. */
function pathsFrom(table: TableName, ty: Ty, asciiOnly: boolean, hops: number): string[][] {
  const own = fieldsOf(table, ty, asciiOnly).map((name) => [name]);
  if (hops === 0) return own;
  const through = Object.entries(schema[table].links).flatMap(([link, target]) =>
    pathsFrom(target as TableName, ty, asciiOnly, hops - 1).map((rest) => [link, ...rest]),
  );
  return [...own, ...through];
}

/** The paths a scope can name, or undefined when there are none of that type. */
export function paths(ctx: Ctx, ty: Ty, asciiOnly = false): fc.Arbitrary<Node> | undefined {
  const candidates = [
    ...pathsFrom(ctx.table, ty, asciiOnly, 2),
    ...ctx.vars.flatMap((v) => pathsFrom(v.table, ty, asciiOnly, 1).map((rest) => [v.name, ...rest])),
  ];
  if (candidates.length === 0) return undefined;
  const own = candidates.filter((path) => path.length === 1 || ctx.vars.some((v) => v.name === path[0]));
  const node = (segments: string[]): Node => ({ k: "path", ty, segments });
  // Fields of the row itself (and of lambda variables) most often; paths through links less so.
  return own.length > 0 && own.length < candidates.length
    ? fc.oneof(
        { arbitrary: fc.constantFrom(...own).map(node), weight: 3 },
        { arbitrary: fc.constantFrom(...candidates).map(node), weight: 2 },
      )
    : fc.constantFrom(...candidates).map(node);
}
