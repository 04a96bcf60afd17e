// The device's journal, simulated: what POST /v2/journal-logs streams. The real endpoint
// pipes `journalctl` (lib/journald.ts); here the supervisor's own log lines and its API
// requests are kept, the newest JOURNAL_LINES of them, under the units journalctl names.

const JOURNAL_LINES = 1000;

export const SUPERVISOR_UNIT = "balena-supervisor.service";

export interface JournalEntry {
  readonly at: number;
  readonly unit: string;
  readonly message: string;
}

export interface JournalQuery {
  readonly count?: number;
  readonly unit?: string;
  readonly format: string;
}

export class Journal {
  private readonly entries: JournalEntry[] = [];
  private readonly listeners = new Set<(entry: JournalEntry) => void>();

  constructor(private readonly hostname: () => string) {}

  record(message: string, unit = SUPERVISOR_UNIT): void {
    const entry = { at: Date.now(), unit, message };
    this.entries.push(entry);
    if (this.entries.length > JOURNAL_LINES) this.entries.shift();
    for (const listener of this.listeners) listener(entry);
  }

  /** The newest `count` matching entries (all without a count), formatted as journalctl does. */
  read(query: JournalQuery): string[] {
    const matching = this.entries.filter((entry) => matches(entry, query));
    const last = query.count === undefined ? matching : matching.slice(-query.count);
    return last.map((entry) => this.format(entry, query.format));
  }

  /** --follow: every new matching entry, formatted; returns the unsubscribe. */
  follow(query: JournalQuery, write: (line: string) => void): () => void {
    const listener = (entry: JournalEntry) => {
      if (matches(entry, query)) write(this.format(entry, query.format));
    };
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // journalctl -o short (the default) and -o json; other formats fall back to short.
  private format(entry: JournalEntry, format: string): string {
    if (format === "json") {
      return `${JSON.stringify({
        __REALTIME_TIMESTAMP: String(entry.at * 1000),
        _HOSTNAME: this.hostname(),
        _SYSTEMD_UNIT: entry.unit,
        SYSLOG_IDENTIFIER: entry.unit.replace(/\.service$/, ""),
        PRIORITY: "6",
        MESSAGE: entry.message,
      })}\n`;
    }
    const date = new Date(entry.at);
    const month = date.toLocaleString("en-US", { month: "short", timeZone: "UTC" });
    const day = String(date.getUTCDate()).padStart(2, "0");
    const time = date.toISOString().slice(11, 19);
    const identifier = entry.unit.replace(/\.service$/, "");
    return `${month} ${day} ${time} ${this.hostname()} ${identifier}[${process.pid}]: ${entry.message}\n`;
  }
}

function matches(entry: JournalEntry, query: JournalQuery): boolean {
  if (query.unit === undefined) return true;
  return entry.unit === query.unit || entry.unit === `${query.unit}.service`;
}
