/** Wakes every waiter whenever something changed (a device answered, a claim came in, the lane stops). */
export class Changes {
  private readonly waiting = new Set<() => void>();

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiting.add(done);
    });
  }

  notify(): void {
    for (const done of [...this.waiting]) done();
  }
}
