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
  readonly binding: Binding;
  readonly extra: Extra;
}

/** A shape whose slots turned out not to be plain bound values: it always takes the full path. */
const uncacheable = Symbol("uncacheable");

// Distinct from any value a client is likely to send, and from each other.
const nonce = randomInt(1_000_000);

/** The probe values of `slots` in probe `round` (1 or 2): each slot's own, of its kind. */
export function sentinels(slots: readonly Slot[], round: number): (string | number)[] {
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
 * Per value: the index of the slot it is, the constant it always is, or an array whose elements
 * bind each (a list of keys bound as one array).
 */
export type Binding = readonly Bound[];
type Bound = { readonly slot: number } | { readonly constant: unknown } | { readonly elements: Binding };

/**
 * Which of a request's values are its slots and which are constants, from the values of the
 * request itself and of two probes with every slot replaced by a sentinel (`sentinels`): every
 * value either is the same in all three or is, in each, exactly the value of one slot, or an array
 * whose elements are so. Undefined when one is neither (a value the compiler transforms, or the
 * probes gave other values).
 */
export function bindingOf(
  slots: readonly Slot[],
  real: readonly unknown[],
  probes: readonly [readonly unknown[], readonly unknown[]],
  probeValues: readonly [(string | number)[], (string | number)[]],
): Binding | undefined {
  if (probes.some((probe) => probe.length !== real.length)) return undefined;
  const binding: Bound[] = [];
  for (let position = 0; position < real.length; position++) {
    const [first, second] = [probes[0][position], probes[1][position]];
    const value = real[position];
    if (sameValue(first, value) && sameValue(second, value)) {
      binding.push({ constant: value });
      continue;
    }
    if (Array.isArray(value) && Array.isArray(first) && Array.isArray(second)) {
      const elements = bindingOf(slots, value, [first, second], probeValues);
      if (!elements) return undefined;
      binding.push({ elements });
      continue;
    }
    const slot = probeValues[0].indexOf(first as string | number);
    if (slot < 0 || probeValues[1][slot] !== second || slots[slot]?.value !== value) return undefined;
    binding.push({ slot });
  }
  return binding;
}

/** The values `binding` gives for a request's `slots`. */
export function boundValues(binding: Binding, slots: readonly Slot[]): unknown[] {
  return binding.map((bound) =>
    "constant" in bound
      ? bound.constant
      : "elements" in bound
        ? boundValues(bound.elements, slots)
        : slots[bound.slot]?.value,
  );
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
      return {
        statement: { text: entry.text, values: boundValues(entry.binding, slots) },
        extra: entry.extra,
      };
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
    // So a value the compiler transforms, folds into the text or checks (a probe that fails) is never cached.
    const binding =
      first && second && first.text === real.statement.text && second.text === real.statement.text
        ? bindingOf(slots, real.statement.values, [first.values, second.values], probeValues)
        : undefined;
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
