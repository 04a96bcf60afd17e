/**
 * How many pool connections some work may hold at once: one request's statements (a budget of one,
 * in its unit of work), or every subscription's reads together (`Database.streams`). Work beyond the
 * budget waits its turn, first come first served, before it asks the pool: so a request with 300
 * root fields, or a burst of changes for 200 subscribers, leaves the rest of the pool to others.
 */
export class ConnectionBudget {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** Connections of this budget held now. */
  get held(): number {
    return this.used;
  }

  /** Runs `work` once the budget has a connection free, and frees it when `work` settles. */
  async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.used < this.size) this.used++;
    // The one who frees a connection hands it on, so `used` never goes over `size`.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    }
  }
}
