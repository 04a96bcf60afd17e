import fc from "fast-check";
import type { ArithOp, CmpOp, Fn, Node } from "./filter-ast.ts";
import {
  boolLiterals,
  type Ctx,
  decLiterals,
  intLiterals,
  paths,
  textLiterals,
  timeLiterals,
} from "./filter-leaves.ts";
import { schema, type TableName } from "./filter-schema.ts";
import {
  type Arb,
  arith,
  call,
  type Mode,
  one,
  ValueArbitraries,
  type Weighted,
} from "./value-arbitraries.ts";

// Generated `$filter`s, well typed by construction.
// - "oracle" mode keeps to what the oracle can state exactly: divisors never zero on the data (non-zero
//   literals, memory_total, length(…) add 1), decimal division only of small values by divisors
//   whose quotients terminate, tolower/toupper only of ASCII text.
// - "hostile" mode drops those limits and leans on what can fail: division and modulo by columns
//   (a column minus a value some row holds), overflow-prone products, substrings with odd bounds.

export type { Mode } from "./value-arbitraries.ts";

const cmpOps: CmpOp[] = ["eq", "ne", "gt", "ge", "lt", "le"];
const anyCmp = fc.constantFrom(...cmpOps);
const varNames = ["t", "u", "v", "w"];

const cmp = (op: CmpOp, l: Node, r: Node): Node => ({ k: "cmp", op, l, r });
/** Sometimes parenthesise a node that does not need it. */
const maybeWrap = (arb: Arb): Arb =>
  fc
    .tuple(arb, fc.integer({ min: 0, max: 9 }))
    .map(([node, roll]) => (roll === 0 ? { ...node, wrap: true } : node));

export class FilterArbitraries extends ValueArbitraries {
  constructor(mode: Mode) {
    super(mode);
  }

  /** A whole filter over device. */
  filter(depth = 3): Arb {
    return this.pred({ table: "device", vars: [] }, depth);
  }

  // ---- booleans --------------------------------------------------------------------------------

  /** `nav/$count` and `nav/$count($filter=…)` from a device. */
  protected count(ctx: Ctx, depth: number): Arb {
    const navs = Object.keys(schema.device.many);
    const plain = fc.constantFrom(...navs).map((nav): Node => ({ k: "count", nav: [nav] }));
    if (depth === 0) return plain;
    const filtered = fc.constantFrom(...navs).chain((nav) => {
      const child = (schema.device.many[nav] as readonly [string, string])[0] as TableName;
      return this.pred({ table: child, vars: ctx.vars }, Math.min(depth - 1, 1)).map(
        (filter): Node => ({ k: "count", nav: [nav], filter }),
      );
    });
    return one(plain, filtered);
  }

  private lambda(ctx: Ctx, depth: number): Arb | undefined {
    if (ctx.table !== "device" || ctx.vars.length >= 2) return undefined;
    const v = varNames[ctx.vars.length] as string;
    const navs = Object.entries(schema.device.many);
    return fc.oneof(
      ...navs.map(([nav, [child]]) =>
        fc
          .tuple(
            fc.constantFrom<"any" | "all">("any", "all"),
            this.pred(
              { table: ctx.table, vars: [...ctx.vars, { name: v, table: child as TableName }] },
              depth - 1,
            ),
          )
          .map(([q, body]): Node => ({ k: "lambda", q, nav: [nav], v, body })),
      ),
    );
  }

  /** A boolean used as a value: a column, a literal, or a predicate in parentheses. */
  private boolValue(ctx: Ctx, depth: number): Arb {
    return one(paths(ctx, "bool") ?? boolLiterals, boolLiterals, depth > 0 && this.pred(ctx, depth - 1));
  }

  /** Any typed expression, to compare with null. */
  private anything(ctx: Ctx, depth: number): Arb {
    return one(
      this.num(ctx, depth),
      this.text(ctx, depth),
      this.time(ctx, depth, true),
      this.date(ctx, depth),
      this.boolValue(ctx, depth),
    );
  }

  pred(ctx: Ctx, depth: number): Arb {
    return this.cached(this.key("pred", ctx, depth), () => {
      const d = Math.max(depth - 1, 0);
      const num = this.num(ctx, d);
      const text = this.text(ctx, d);
      const numLit = one(intLiterals, decLiterals);
      const literalSide = <T extends Node>(expr: Arb, lit: fc.Arbitrary<T>) =>
        fc
          .tuple(anyCmp, expr, lit, fc.boolean())
          .map(([op, e, l, swap]) => (swap ? cmp(op, l, e) : cmp(op, e, l)));
      const bothSides = (a: Arb, b: Arb) => fc.tuple(anyCmp, a, b).map(([op, l, r]) => cmp(op, l, r));
      const nullCmp = fc
        .tuple(fc.constantFrom<CmpOp>("eq", "ne"), this.anything(ctx, d), fc.boolean())
        .map(([op, e, swap]) => (swap ? cmp(op, { k: "null" }, e) : cmp(op, e, { k: "null" })));
      const inList = one(
        fc
          .tuple(one(paths(ctx, "int") ?? num, num), fc.array(numLit, { minLength: 1, maxLength: 4 }))
          .map(([x, values]): Node => ({ k: "in", x, values })),
        fc
          .tuple(
            one(paths(ctx, "text") ?? text, text),
            fc.array(textLiterals(false), { minLength: 1, maxLength: 4 }),
          )
          .map(([x, values]): Node => ({ k: "in", x, values })),
      );
      const textFn = fc
        .tuple(
          fc.constantFrom<Fn>("contains", "startswith", "endswith", "substringof"),
          text,
          one(textLiterals(false), text),
        )
        .map(([fn, s, t]) => call(fn, "bool", s, t));
      const status: Node = { k: "path", ty: "text", segments: ["overall_status"] };
      const statusLits = fc.constantFrom("inactive", "configuring", "offline", "updating", "idle");
      const overall =
        ctx.table === "device" &&
        one(
          statusLits.map((s) => cmp("eq", status, { k: "lit", ty: "text", text: `'${s}'`, value: s })),
          fc.uniqueArray(statusLits, { minLength: 1, maxLength: 3 }).map(
            (xs): Node => ({
              k: "in",
              x: status,
              values: xs.map((s) => ({ k: "lit", ty: "text", text: `'${s}'`, value: s })),
            }),
          ),
        );
      const leaves: Weighted[] = [
        { arbitrary: literalSide(num, numLit), weight: 4 },
        { arbitrary: literalSide(text, textLiterals(false)), weight: 3 },
        { arbitrary: paths(ctx, "bool") ?? boolLiterals, weight: 1 },
        { arbitrary: nullCmp, weight: 2 },
        { arbitrary: inList, weight: 2 },
        { arbitrary: textFn, weight: 2 },
        { arbitrary: literalSide(this.time(ctx, d, true), timeLiterals), weight: 1 },
      ];
      if (overall) leaves.push({ arbitrary: overall, weight: 1 });
      if (this.mode === "hostile") {
        // What probes another tenant's rows: a quotient that fails exactly where a divisor is zero.
        const quotient = fc
          .tuple(fc.constantFrom<ArithOp>("div", "mod"), one(intLiterals, num), this.intDivisor(ctx, d))
          .map(([op, l, r]) => arith(op, l, r, "int"));
        leaves.push({ arbitrary: literalSide(quotient, numLit), weight: 4 });
      }
      if (depth === 0) return maybeWrap(fc.oneof(...leaves));
      const sub = this.pred(ctx, depth - 1);
      const lambda = this.lambda(ctx, depth);
      return maybeWrap(
        one(
          ...leaves,
          { arbitrary: bothSides(num, num), weight: 3 },
          { arbitrary: bothSides(text, text), weight: 2 },
          { arbitrary: bothSides(this.boolValue(ctx, d), this.boolValue(ctx, d)), weight: 2 },
          {
            arbitrary: bothSides(
              one(this.time(ctx, d, true), this.date(ctx, d)),
              one(this.time(ctx, d, true), this.date(ctx, d)),
            ),
            weight: 1,
          },
          {
            arbitrary: fc
              .tuple(
                fc.constantFrom<"and" | "or">("and", "or"),
                fc.array(sub, { minLength: 2, maxLength: 3 }),
              )
              .map(([op, xs]): Node => ({ k: "logic", op, xs })),
            weight: 4,
          },
          { arbitrary: sub.map((x): Node => ({ k: "not", x })), weight: 2 },
          lambda && { arbitrary: lambda, weight: 2 },
        ),
      );
    });
  }
}
