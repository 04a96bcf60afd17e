/**
 * At most `size` slots held at once. A holder takes several at a time (a worker claims as many
 * devices as it has slots for) and gives them back one by one (as each device answers).
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = Math.max(1, size);
  }

  /**
   * Waits until a slot is free, then takes up to `most` of the free ones: answers how many, 0 when
   * `signal` ended the wait. Waiters are woken in order.
   */
  async take(most: number, signal?: AbortSignal): Promise<number> {
    while (this.free === 0) {
      if (signal?.aborted) return 0;
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal?.removeEventListener("abort", abort);
          resolve();
        };
        // An abandoned wait leaves the line, so a slot given later wakes someone still waiting.
        const abort = () => {
          const at = this.waiting.indexOf(wake);
          if (at >= 0) this.waiting.splice(at, 1);
          resolve();
        };
        this.waiting.push(wake);
        signal?.addEventListener("abort", abort, { once: true });
      });
    }
    if (signal?.aborted) return 0;
    const taken = Math.min(Math.max(1, most), this.free);
    this.free -= taken;
    return taken;
  }

  give(count = 1): void {
    if (count <= 0) return;
    this.free += count;
    for (let woken = 0; woken < count; woken++) this.waiting.shift()?.();
  }
}
