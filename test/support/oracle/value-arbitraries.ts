import fc from "fast-check";
import type { ArithOp, Fn, Node } from "./filter-ast.ts";
import {
  type Ctx,
  decLiterals,
  intLiterals,
  niceDecDivisors,
  niceIntDivisors,
  nonZeroIntLiterals,
  paths,
  textLiterals,
  timeLiterals,
} from "./filter-leaves.ts";
import type { Ty } from "./filter-schema.ts";

// The typed values of generated filters: numbers, text, timestamps, dates (see filter-arbitraries.ts
// for the two modes).

export type Mode = "oracle" | "hostile";

export type Arb = fc.Arbitrary<Node>;
export type Weighted = { arbitrary: Arb; weight: number };

export const arith = (op: ArithOp, l: Node, r: Node, ty: "int" | "dec"): Node => ({
  k: "arith",
  op,
  l,
  r,
  ty,
});
export const call = (fn: Fn, ty: Ty, ...args: Node[]): Node => ({ k: "call", fn, ty, args });
const isDec = (node: Node) =>
  (node.k === "lit" || node.k === "arith" || node.k === "call" || node.k === "path") && node.ty === "dec";
const isDecNotRounded = (node: Node) => isDec(node) && node.k !== "call";
const ONE: Node = { k: "lit", ty: "int", text: "1", value: { n: 1n, d: 1n } };

/** One of the options that are present, by weight. */
export const one = (...options: (Weighted | Arb | undefined | false)[]): Arb => {
  const present = options.filter((o): o is Weighted | Arb => Boolean(o));
  return fc.oneof(...present.map((o) => ("arbitrary" in o ? o : { arbitrary: o, weight: 1 })));
};

export abstract class ValueArbitraries {
  private readonly memo = new Map<string, Arb>();

  constructor(protected readonly mode: Mode) {}

  protected cached(key: string, build: () => Arb): Arb {
    let arb = this.memo.get(key);
    if (!arb) {
      arb = build();
      this.memo.set(key, arb);
    }
    return arb;
  }

  protected key = (name: string, ctx: Ctx, depth: number, extra = "") =>
    `${name}|${ctx.table}|${ctx.vars.map((v) => `${v.name}:${v.table}`).join(",")}|${depth}|${extra}`;

  // ---- numbers --------------------------------------------------------------------------------

  int(ctx: Ctx, depth: number): Arb {
    return this.cached(this.key("int", ctx, depth), () => {
      const leaves = one(
        { arbitrary: paths(ctx, "int") ?? intLiterals, weight: 4 },
        { arbitrary: intLiterals, weight: 1 },
        depth > 0 && { arbitrary: this.text(ctx, depth - 1).map((s) => call("length", "int", s)), weight: 1 },
        depth > 0 && {
          arbitrary: fc
            .tuple(this.text(ctx, depth - 1), this.text(ctx, depth - 1))
            .map(([s, t]) => call("indexof", "int", s, t)),
          weight: 1,
        },
        depth > 0 && {
          arbitrary: fc
            .tuple(
              fc.constantFrom<Fn>("year", "month", "day", "hour", "minute", "second"),
              this.time(ctx, depth - 1, false),
            )
            .map(([fn, t]) => call(fn, "int", t)),
          weight: 1,
        },
        ctx.table === "device" && { arbitrary: this.count(ctx, depth), weight: 1 },
      );
      if (depth === 0) return leaves;
      const sub = this.int(ctx, depth - 1);
      const ops = fc.constantFrom<ArithOp>("add", "sub", "mul", "add", "sub");
      return one(
        { arbitrary: leaves, weight: 3 },
        { arbitrary: fc.tuple(ops, sub, sub).map(([op, l, r]) => arith(op, l, r, "int")), weight: 3 },
        {
          arbitrary: fc
            .tuple(fc.constantFrom<ArithOp>("div", "mod"), sub, this.intDivisor(ctx, depth - 1))
            .map(([op, l, r]) => arith(op, l, r, "int")),
          weight: this.mode === "hostile" ? 4 : 2,
        },
      );
    });
  }

  /** Divisors of integer division and modulo. */
  protected intDivisor(ctx: Ctx, depth: number): Arb {
    if (this.mode === "hostile") {
      // A column minus a value some row may hold: zero on exactly the rows that hold it.
      const column = paths(ctx, "int") ?? intLiterals;
      const shifted = fc.tuple(column, intLiterals).map(([c, n]) => arith("sub", c, n, "int"));
      return one(this.int(ctx, depth), shifted, column);
    }
    const totals: Node[] = [];
    if (ctx.table === "device") totals.push({ k: "path", ty: "int", segments: ["memory_total"] });
    for (const v of ctx.vars)
      if (v.table === "device") totals.push({ k: "path", ty: "int", segments: [v.name, "memory_total"] });
    return one(
      { arbitrary: nonZeroIntLiterals, weight: 3 },
      totals.length > 0 && { arbitrary: fc.constantFrom(...totals), weight: 2 },
      {
        arbitrary: this.text(ctx, depth).map((s) => arith("add", call("length", "int", s), ONE, "int")),
        weight: 1,
      },
    );
  }

  /** Any number: integer- or decimal-typed. */
  num(ctx: Ctx, depth: number): Arb {
    return this.cached(this.key("num", ctx, depth), () =>
      one({ arbitrary: this.int(ctx, depth), weight: 3 }, { arbitrary: this.dec(ctx, depth), weight: 2 }),
    );
  }

  /** A decimal-typed number. */
  dec(ctx: Ctx, depth: number): Arb {
    return this.cached(this.key("dec", ctx, depth), () => {
      if (depth === 0) return decLiterals;
      const num = this.num(ctx, depth - 1);
      const dec = this.dec(ctx, depth - 1);
      const rounding = fc.constantFrom<Fn>("round", "floor", "ceiling");
      const ops = fc.constantFrom<ArithOp>("add", "sub", "mul");
      return one(
        { arbitrary: decLiterals, weight: 2 },
        {
          arbitrary: fc
            .tuple(ops, num, dec, fc.boolean())
            .map(([op, a, b, swap]) => (swap ? arith(op, b, a, "dec") : arith(op, a, b, "dec"))),
          weight: 2,
        },
        { arbitrary: this.decDiv(ctx, depth), weight: 3 },
        {
          arbitrary: fc
            .tuple(rounding, this.mode === "hostile" ? num : this.small(ctx, depth - 1))
            .map(([fn, a]) => call(fn, "dec", a)),
          weight: 2,
        },
        {
          arbitrary: fc
            .tuple(dec, this.mode === "hostile" ? num : nonZeroIntLiterals)
            .map(([a, b]) => arith("mod", a, b, "dec")),
          weight: 1,
        },
      );
    });
  }

  /** Decimal division: exact on small dividends and terminating divisors (oracle mode). */
  private decDiv(ctx: Ctx, depth: number): Arb {
    if (this.mode === "hostile") {
      const num = this.num(ctx, depth - 1);
      return fc
        .tuple(num, num, decLiterals, fc.boolean())
        .map(([a, b, d, left]) =>
          left ? arith("div", d, a, "dec") : arith("div", a, isDec(b) ? b : d, "dec"),
        );
    }
    const small = this.small(ctx, depth - 1);
    return one(
      fc.tuple(small, niceDecDivisors).map(([a, d]) => arith("div", a, d, "dec")),
      fc.tuple(small.filter(isDecNotRounded), niceIntDivisors).map(([a, d]) => arith("div", a, d, "dec")),
    );
  }

  /** Numbers of at most a few billion with a few decimals: numeric division keeps every digit of them. */
  private small(ctx: Ctx, depth: number): Arb {
    return this.cached(this.key("small", ctx, depth), () => {
      const leaves = one(paths(ctx, "int") ?? intLiterals, intLiterals, decLiterals);
      if (depth === 0) return leaves;
      const sub = this.small(ctx, depth - 1);
      return one(
        { arbitrary: leaves, weight: 3 },
        {
          arbitrary: fc
            .tuple(fc.constantFrom<ArithOp>("add", "sub"), sub, sub)
            .map(([op, l, r]) => arith(op, l, r, isDec(l) || isDec(r) ? "dec" : "int")),
          weight: 1,
        },
        { arbitrary: fc.tuple(sub, niceDecDivisors).map(([a, d]) => arith("div", a, d, "dec")), weight: 1 },
        {
          arbitrary: fc
            .tuple(fc.constantFrom<Fn>("round", "floor", "ceiling"), sub)
            .map(([fn, a]) => call(fn, "dec", a)),
          weight: 1,
        },
      );
    });
  }

  // ---- text, time ------------------------------------------------------------------------------

  text(ctx: Ctx, depth: number, ascii = false): Arb {
    return this.cached(this.key("text", ctx, depth, String(ascii)), () => {
      const leaves = one(
        { arbitrary: paths(ctx, "text", ascii) ?? textLiterals(ascii), weight: 3 },
        { arbitrary: textLiterals(ascii), weight: 1 },
      );
      if (depth === 0) return leaves;
      const sub = this.text(ctx, depth - 1, ascii);
      const caseable = this.text(ctx, depth - 1, this.mode === "oracle");
      const int = this.int(ctx, depth - 1);
      return one(
        { arbitrary: leaves, weight: 4 },
        {
          arbitrary: fc
            .tuple(fc.constantFrom<Fn>("tolower", "toupper"), caseable)
            .map(([fn, s]) => call(fn, "text", s)),
          weight: 1,
        },
        { arbitrary: sub.map((s) => call("trim", "text", s)), weight: 1 },
        { arbitrary: fc.tuple(sub, sub).map(([s, t]) => call("concat", "text", s, t)), weight: 1 },
        { arbitrary: fc.tuple(sub, int).map(([s, i]) => call("substring", "text", s, i)), weight: 1 },
        {
          arbitrary: fc.tuple(sub, int, int).map(([s, i, n]) => call("substring", "text", s, i, n)),
          weight: 2,
        },
        {
          arbitrary: fc.tuple(sub, sub, sub).map(([s, t, u]) => call("replace", "text", s, t, u)),
          weight: 1,
        },
      );
    });
  }

  /** A timestamp; `now()` only where the truth of the comparison cannot depend on the instant. */
  time(ctx: Ctx, depth: number, withNow: boolean): Arb {
    const now: Node = { k: "call", fn: "now", ty: "time", args: [] };
    return one(
      { arbitrary: paths(ctx, "time") ?? timeLiterals, weight: 3 },
      { arbitrary: timeLiterals, weight: 2 },
      withNow && depth >= 0 && { arbitrary: fc.constant(now), weight: 1 },
    );
  }

  protected date(ctx: Ctx, depth: number): Arb {
    return this.time(ctx, depth, true).map((t) => call("date", "date", t));
  }

  /** `nav/$count` and `nav/$count($filter=…)` from a device: an integer made of a predicate. */
  protected abstract count(ctx: Ctx, depth: number): Arb;
}
