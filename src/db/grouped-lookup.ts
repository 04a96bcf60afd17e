import { outsideUnitOfWork } from "./unit-of-work.ts";

// Lookups by key that arrive together are answered by one statement (issue 46): at a million
// devices' cadence every request resolves its credential, and a cache cannot hold them all (a device
// calls every few minutes), so each lookup was a statement of its own. Grouped:
// 1. A lookup waits for the rest of the current turn of the event loop (`setImmediate`), not for a
//    timer: alone, it goes at once.
// 2. At most `inFlight` statements run at once; what arrives while they run is the next group, so
//    the busier the server, the fuller each statement (and the fewer connections lookups take).
// 3. The same key asked twice before its lookup is sent shares that lookup; asked once it is sent, it
//    is looked up again (a change committed meanwhile, a key revoked, must count for the later ask).
// 4. A group runs for no request (outside every unit of work): a client that goes away cancels
//    nothing of the others' lookups. A failed statement fails each lookup of its group.

export interface GroupOptions {
  readonly inFlight: number;
  readonly maxGroup: number;
}

export const lookupGrouping: GroupOptions = { inFlight: 2, maxGroup: 500 };

/** A lookup waiting for its group's statement. */
interface Waiting<V> {
  readonly promise: Promise<V | undefined>;
  resolve(value: V | undefined): void;
  reject(error: unknown): void;
}

function waiting<V>(): Waiting<V> {
  let resolve!: (value: V | undefined) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<V | undefined>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

export class GroupedLookup<V> {
  private waiting = new Map<string, Waiting<V>>();
  private running = 0;
  private scheduled = false;

  /** `read` answers a group of distinct keys with the value found for each (absent: none). */
  constructor(
    private readonly read: (keys: readonly string[]) => Promise<ReadonlyMap<string, V>>,
    private readonly options: GroupOptions = lookupGrouping,
  ) {}

  get(key: string): Promise<V | undefined> {
    let lookup = this.waiting.get(key);
    if (!lookup) {
      lookup = waiting<V>();
      this.waiting.set(key, lookup);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    }
    return lookup.promise;
  }

  private flush(): void {
    while (this.running < this.options.inFlight && this.waiting.size > 0) {
      const group = this.take();
      this.running++;
      void outsideUnitOfWork(() => this.run(group)).finally(() => {
        this.running--;
        this.flush();
      });
    }
  }

  /** The oldest waiting lookups, at most `maxGroup` (a Map iterates in insertion order). */
  private take(): Map<string, Waiting<V>> {
    if (this.waiting.size <= this.options.maxGroup) {
      const group = this.waiting;
      this.waiting = new Map();
      return group;
    }
    const group = new Map<string, Waiting<V>>();
    for (const [key, lookup] of this.waiting) {
      if (group.size === this.options.maxGroup) break;
      group.set(key, lookup);
      this.waiting.delete(key);
    }
    return group;
  }

  private async run(group: ReadonlyMap<string, Waiting<V>>): Promise<void> {
    try {
      const found = await this.read([...group.keys()]);
      for (const [key, lookup] of group) lookup.resolve(found.get(key));
    } catch (error) {
      for (const lookup of group.values()) lookup.reject(error);
    }
  }
}
