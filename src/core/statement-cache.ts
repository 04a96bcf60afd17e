import { randomInt } from "node:crypto";
import type { Statement } from "../db/database.ts";

// Compiled statements by the shape of what asked for them: requests that differ only in some
// literal values (a key, the value a field is compared with) share one statement and bind their
// own values. Each surface says what a shape and its slots are (./query-shape.ts for query trees,
// odata/shape.ts for URLs); what they share is here: proving that a shape's slots really are plain
// bound values, and a bounded cache.

/** A value cut out of a request: it becomes a bound value of the statement, or the shape is not cached. */
export type Slot =
  | { readonly kind: "text"; readonly value: string }
  | { readonly kind: "integer"; readonly value: number };

export interface StatementCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
}

interface Shape<Extra> {
  readonly text: string;
  /** Per bound value: the index of the slot it is, or the constant it always is. */
  readonly binding: readonly ({ readonly slot: number } | { readonly constant: unknown })[];
  readonly extra: Extra;
}

/** A shape whose slots turned out not to be plain bound values: it always takes the full path. */
const uncacheable = Symbol("uncacheable");

// Distinct from any value a client is likely to send, and from each other.
const nonce = randomInt(1_000_000);
function sentinels(slots: readonly Slot[], round: number): (string | number)[] {
  return slots.map((slot, index) =>
    slot.kind === "text"
      ? `fgslot${round}x${index}x${nonce}`
      : 1_900_000_000 + round * 100_000 + index * 1_000 + (nonce % 1_000),
  );
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return typeof a === "object" && typeof b === "object" && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Which bound values are slots and which are constants, from the statement of the request itself
 * and of two probes with every slot replaced by a sentinel. Cacheable only when all three have the
 * same text and every value either is the same in all three or is, in each, exactly the value of
 * one slot. So a value the compiler transforms (a `contains` pattern), folds into the text or
 * checks (a probe that fails) is never cached.
 */
function bindingOf(
  slots: readonly Slot[],
  real: Statement,
  probes: readonly [Statement, Statement],
  probeValues: readonly [(string | number)[], (string | number)[]],
): Shape<unknown>["binding"] | undefined {
  if (probes.some((probe) => probe.text !== real.text || probe.values.length !== real.values.length))
    return undefined;
  const binding: Shape<unknown>["binding"][number][] = [];
  for (let position = 0; position < real.values.length; position++) {
    const [first, second] = [probes[0].values[position], probes[1].values[position]];
    const value = real.values[position];
    if (sameValue(first, value) && sameValue(second, value)) {
      binding.push({ constant: value });
      continue;
    }
    const slot = probeValues[0].indexOf(first as string | number);
    if (slot < 0 || probeValues[1][slot] !== second || slots[slot]?.value !== value) return undefined;
    binding.push({ slot });
  }
  return binding;
}

/**
 * The statement cache: statements by shape key, least recently used out first; `Extra` is what a
 * surface keeps beside.
 */
export class StatementCache<Extra> {
  private readonly entries = new Map<string, Shape<Extra> | typeof uncacheable>();
  private hitCount = 0;
  private missCount = 0;

  constructor(private readonly capacity = 1_000) {}

  /**
   * The statement of a request of this shape: the cached one with the request's slot values bound,
   * or `compile()` (the full path, for the request as it came), learnt on a first miss. To learn,
   * `compile(values)` compiles the request again with its slots set to `values`; a throw there
   * leaves the shape uncacheable.
   */
  compile(
    key: string,
    slots: readonly Slot[],
    compile: (values?: readonly (string | number)[]) => { statement: Statement; extra: Extra },
  ): { statement: Statement; extra: Extra } {
    const entry = this.entries.get(key);
    if (entry !== undefined && entry !== uncacheable) {
      // Most recently used last.
      this.entries.delete(key);
      this.entries.set(key, entry);
      this.hitCount++;
      const values = entry.binding.map((bound) =>
        "constant" in bound ? bound.constant : slots[bound.slot]?.value,
      );
      return { statement: { text: entry.text, values }, extra: entry.extra };
    }
    this.missCount++;
    const fresh = compile();
    if (entry === undefined) this.learn(key, slots, fresh, compile);
    return fresh;
  }

  private learn(
    key: string,
    slots: readonly Slot[],
    real: { statement: Statement; extra: Extra },
    compile: (values: readonly (string | number)[]) => { statement: Statement },
  ): void {
    if (this.capacity <= 0) return;
    const probeValues = [sentinels(slots, 1), sentinels(slots, 2)] as const;
    const [first, second] = probeValues.map((values) => {
      try {
        return compile(values).statement;
      } catch {
        return undefined;
      }
    });
    const binding =
      first && second ? bindingOf(slots, real.statement, [first, second], probeValues) : undefined;
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, binding ? { text: real.statement.text, binding, extra: real.extra } : uncacheable);
  }

  get stats(): StatementCacheStats {
    return { hits: this.hitCount, misses: this.missCount, entries: this.entries.size };
  }
}
