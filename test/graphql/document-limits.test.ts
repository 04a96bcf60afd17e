import fc from "fast-check";
import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { crowdingOf, fieldsOf } from "../../src/graphql/execution/document-limits.ts";

// fieldsOf counts in one pass what an operation runs: the same number as expanding every fragment
// where it is spread, plus each fragment's own fields. Generated documents of fragments spreading
// earlier fragments (a DAG) and nested fields; the expansion is done naively here.

type Item = { readonly field: string; readonly sub: readonly Item[] } | { readonly spread: number };

const items = (fragments: number, depth: number): fc.Arbitrary<Item[]> =>
  fc.array(
    fc.oneof(
      fc.record({
        field: fc.constantFrom("a", "b", "c"),
        sub: depth > 0 ? fc.constant(null).chain(() => items(fragments, depth - 1)) : fc.constant([]),
      }),
      ...(fragments > 0 ? [fc.record({ spread: fc.nat({ max: fragments - 1 }) })] : []),
    ),
    { minLength: 1, maxLength: 4 },
  );

const documents = fc.nat({ max: 5 }).chain((count) =>
  fc.record({
    fragments: fc.tuple(...Array.from({ length: count }, (_, i) => items(i, 2))),
    operation: items(count, 2),
  }),
);

const text = (list: readonly Item[]): string =>
  `{ ${list.map((item) => ("spread" in item ? `...F${item.spread}` : `${item.field}${item.sub.length ? ` ${text(item.sub)}` : ""}`)).join(" ")} }`;

function expanded(list: readonly Item[], fragments: readonly (readonly Item[])[]): number {
  return list.reduce(
    (sum, item) =>
      sum +
      ("spread" in item
        ? expanded(fragments[item.spread] ?? [], fragments)
        : 1 + expanded(item.sub, fragments)),
    0,
  );
}

describe("fieldsOf", () => {
  it("equals the fields of every fragment expanded where it is spread, plus the fragments' own", () => {
    fc.assert(
      fc.property(documents, ({ fragments, operation }) => {
        const source = [
          text(operation),
          ...fragments.map((list, i) => `fragment F${i} on T ${text(list)}`),
        ].join(" ");
        const own = fragments.reduce((sum, list) => sum + expanded(list, []), 0);
        expect(fieldsOf(parse(source))).toBe(expanded(operation, fragments) + own);
      }),
      { numRuns: 300 },
    );
  });

  it("counts a fragment once: forty fragments each spread twice in the next are 2⁴⁰ fields, counted at once", () => {
    const fragments = Array.from({ length: 40 }, (_, i) =>
      i === 0
        ? "fragment F0 on T { a }"
        : `fragment F${i} on T { x: n { ...F${i - 1} } y: n { ...F${i - 1} } }`,
    );
    // F_i = 2 × (1 + F_(i-1)), F_0 = 1; the fragments' own: 1 + 39 × 2.
    let bomb = 1;
    for (let i = 1; i < 40; i++) bomb = 2 * (1 + bomb);
    expect(fieldsOf(parse(`{ ...F39 } ${fragments.join(" ")}`))).toBe(bomb + 1 + 39 * 2);
  });

  it("a cycle of fragments counts nothing more (validation refuses it)", () => {
    expect(fieldsOf(parse("{ ...A } fragment A on T { a ...B } fragment B on T { b ...A }"))).toBe(2 + 2);
  });
});

describe("crowdingOf", () => {
  it("finds 33 fields of one key, or 33 fragments, side by side at any depth, inline fragments' fields included", () => {
    expect(crowdingOf(parse(`{ a { ${"b ".repeat(32)}} }`))).toBeUndefined();
    expect(crowdingOf(parse(`{ a { ${"b ".repeat(33)}} }`))).toBe("33 fields named b");
    expect(crowdingOf(parse(`{ a { ${"... on T { b } ".repeat(17)}${"b ".repeat(16)}} }`))).toBe(
      "33 fields named b",
    );
    expect(crowdingOf(parse(`{ ${"...F ".repeat(33)}} fragment F on T { a }`))).toBe("33 fragments");
  });
});
