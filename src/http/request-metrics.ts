// The HTTP request families of `/metrics` (README "Operations"), counted by hand: prom-client
// checks and hashes the labels of every observation (an object of labels, sorted and joined, for
// each of three families), which showed in the profile of every request. Here a request finds its
// series with one map lookup, and the families are written in the same text format when scraped.

const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const statementBuckets = [0, 1, 2, 3, 5, 10, 25, 100];

/** Counts by bucket (the last one: above every bound), their sum and count. */
class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let bucket = 0;
    while (bucket < this.bounds.length && value > (this.bounds[bucket] as number)) bucket++;
    this.counts[bucket] = (this.counts[bucket] as number) + 1;
    this.sum += value;
    this.count++;
  }

  /** `_bucket` (cumulative, as Prometheus reads them), `_sum` and `_count` lines. */
  lines(name: string, labels: string): string[] {
    const lines: string[] = [];
    let cumulative = 0;
    for (const [bucket, count] of this.counts.entries()) {
      cumulative += count;
      const le = bucket < this.bounds.length ? String(this.bounds[bucket]) : "+Inf";
      lines.push(`${name}_bucket{${labels},le="${le}"} ${cumulative}`);
    }
    lines.push(`${name}_sum{${labels}} ${this.sum}`, `${name}_count{${labels}} ${this.count}`);
    return lines;
  }
}

interface RouteSeries {
  readonly labels: string;
  readonly statements: Histogram;
  readonly byStatus: Map<number, { count: number; readonly duration: Histogram }>;
}

// The text format's escapes in a label value.
const labelValue = (value: string) =>
  `"${value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"')}"`;

const family = (name: string, type: string, help: string, lines: readonly string[]) =>
  [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines].join("\n");

/**
 * `fleetgate_http_requests_total`, `fleetgate_http_request_duration_seconds` (by method, route
 * template and status) and `fleetgate_http_request_sql_statements` (by method and route template).
 */
export class RequestMetrics {
  private readonly routes = new Map<string, RouteSeries>();

  /** One answered request. `route` is a route template (or one fixed word), never a URL. */
  observe(method: string, route: string, status: number, seconds: number, statements: number): void {
    const key = `${method} ${route}`;
    let series = this.routes.get(key);
    if (!series) {
      series = {
        labels: `method=${labelValue(method)},route=${labelValue(route)}`,
        statements: new Histogram(statementBuckets),
        byStatus: new Map(),
      };
      this.routes.set(key, series);
    }
    series.statements.observe(statements);
    let answered = series.byStatus.get(status);
    if (!answered) {
      answered = { count: 0, duration: new Histogram(durationBuckets) };
      series.byStatus.set(status, answered);
    }
    answered.count++;
    answered.duration.observe(seconds);
  }

  /** The three families in the Prometheus text format (0.0.4). */
  text(): string {
    const requests: string[] = [];
    const durations: string[] = [];
    const statements: string[] = [];
    for (const series of this.routes.values()) {
      statements.push(...series.statements.lines("fleetgate_http_request_sql_statements", series.labels));
      for (const [status, answered] of series.byStatus) {
        const labels = `${series.labels},status="${status}"`;
        requests.push(`fleetgate_http_requests_total{${labels}} ${answered.count}`);
        durations.push(...answered.duration.lines("fleetgate_http_request_duration_seconds", labels));
      }
    }
    return `${[
      family(
        "fleetgate_http_requests_total",
        "counter",
        "HTTP requests answered, by method, route template and status",
        requests,
      ),
      family(
        "fleetgate_http_request_duration_seconds",
        "histogram",
        "Time from a request's arrival to its answer, by method, route template and status",
        durations,
      ),
      family(
        "fleetgate_http_request_sql_statements",
        "histogram",
        "SQL statements a request's handler ran (x-sql-statements), by method and route template",
        statements,
      ),
    ].join("\n\n")}\n`;
  }
}
