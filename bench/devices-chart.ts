import type { DevicesResult, DevicesRow, Scaling } from "./devices-result.ts";

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

const COLOURS: Record<string, { polls: string; reports: string }> = {
  v2: { polls: "#2e7dd1", reports: "#9cc3ee" },
  v3: { polls: "#2e9d4f", reports: "#a3d9b1" },
};
const BAR = 40;

/** What a bar shows: the ramp's capacity when it ran, else what the steady phase answered. */
function barOf(row: DevicesRow): { polls: number; reports: number } {
  if (row.ramp.length > 0)
    return { polls: row.capacity?.pollsPerSecond ?? 0, reports: row.capacity?.reportsPerSecond ?? 0 };
  // Over the phase as it ran, the answers that came late included (`answeredPerSecond`).
  const { polls, reports, seconds } = row.steady;
  return {
    polls: (polls.ok + polls.notModified) / seconds,
    reports: reports.ok / seconds,
  };
}
const capacityOf = (row: DevicesRow) => barOf(row).polls + barOf(row).reports;
const groupOf = (row: DevicesRow) =>
  `${row.instances} instance${row.instances === 1 ? "" : "s"}${row.database === "primary+replica" ? ", primary + replica" : ""}`;

/**
 * Per instance count, a bar per API: the requests per second that held p99 within the limit, polls
 * (dark) under reports (light); the real rate of the seeded devices as a dashed line; under each
 * group, where it saturated and PostgreSQL's CPU there.
 */
export function devicesChart(result: DevicesResult): string {
  const counts = [...new Set(result.rows.map(groupOf))];
  const ramped = result.rows.some((row) => row.ramp.length > 0);
  const apis = result.config.apis;
  const left = 80;
  const groupWidth = apis.length * (BAR + 16) + 200;
  const width = Math.max(1000, left + 40 + counts.length * groupWidth);
  const top = 100;
  const bottom = 380;
  const height = bottom + 30 + 18 * (1 + 2 * apis.length);
  const real = result.realRate.polls + result.realRate.reports;
  const topValue = Math.max(real, 1, ...result.rows.map(capacityOf)) * 1.15;
  const y = (value: number) => bottom - (value / topValue) * (bottom - top);
  const { config, machine } = result;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="bold">${escapeXml(
      ramped
        ? `Device API: requests/s at p99 ≤ ${config.p99LimitMs} ms, ${config.devices.toLocaleString("en")} devices`
        : `Device API: requests/s answered at ${config.devices.toLocaleString("en")} devices' real rate (p99 limit ${config.p99LimitMs} ms)`,
    )}</text>`,
    `<text x="${left}" y="42" fill="#555">${escapeXml(`${result.date.slice(0, 16).replace("T", " ")} UTC, ${machine.cpus} × ${machine.cpuModel}; ${machine.postgres}; ${config.loadProcesses} load process${config.loadProcesses === 1 ? "" : "es"}; load average ${result.loadAverage?.[0] ?? "–"} at the start.`)}</text>`,
    `<text x="${left}" y="58" fill="#555">${escapeXml(`Polls every ${config.pollIntervalS} s (+≤${config.pollJitterS} s), reports every ${config.reportIntervalS} s; ${ramped ? `ramp ×${config.rampFactor} from ${config.rampFrom} req/s, ${config.stepSeconds} s steps` : `steady ${config.seconds} s`}. Dashes: the devices' real rate.`)}</text>`,
  ];
  let legendX = left;
  for (const api of apis) {
    for (const kind of ["polls", "reports"] as const) {
      const label = `${api} ${kind}`;
      parts.push(`<rect x="${legendX}" y="68" width="12" height="12" fill="${COLOURS[api]?.[kind]}"/>`);
      parts.push(`<text x="${legendX + 16}" y="78">${label}</text>`);
      legendX += 30 + label.length * 7;
    }
  }
  const ticks = 5;
  for (let i = 0; i <= ticks; i++) {
    const value = (topValue / ticks) * i;
    parts.push(`<line x1="${left}" x2="${width - 20}" y1="${y(value)}" y2="${y(value)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${left - 8}" y="${y(value) + 4}" text-anchor="end">${Math.round(value)}</text>`);
  }
  parts.push(
    `<line x1="${left}" x2="${width - 20}" y1="${y(real)}" y2="${y(real)}" stroke="#d2423a" stroke-dasharray="5,3"/>`,
    `<text x="${width - 20}" y="${y(real) - 4}" text-anchor="end" fill="#d2423a">${escapeXml(`real rate ${Math.round(real)} req/s`)}</text>`,
  );
  counts.forEach((count, index) => {
    const x = left + 20 + index * groupWidth;
    const rows = result.rows.filter((row) => groupOf(row) === count);
    rows.forEach((row, at) => {
      const bx = x + at * (BAR + 16);
      const { polls, reports } = barOf(row);
      const colours = COLOURS[row.api] ?? { polls: "#888", reports: "#ccc" };
      parts.push(
        `<rect x="${bx}" y="${y(polls)}" width="${BAR}" height="${bottom - y(polls)}" fill="${colours.polls}"/>`,
        `<rect x="${bx}" y="${y(polls + reports)}" width="${BAR}" height="${y(polls) - y(polls + reports)}" fill="${colours.reports}"/>`,
        `<text x="${bx + BAR / 2}" y="${y(polls + reports) - 5}" text-anchor="middle" font-size="10">${Math.round(polls + reports)}</text>`,
        `<text x="${bx + BAR / 2}" y="${bottom + 14}" text-anchor="middle">${row.api}</text>`,
      );
    });
    const lines = [
      count,
      ...rows.flatMap((row) =>
        row.ramp.length === 0
          ? [
              `${row.api}: steady p50/p99 ${Math.max(row.steady.polls.p50Ms, row.steady.reports.p50Ms)}/${Math.max(row.steady.polls.p99Ms, row.steady.reports.p99Ms)} ms${row.steady.held ? ", held" : ", not held"}`,
              `   µs/request: server ${row.steady.servers.cpuUsPerRequest}, PostgreSQL ${row.steady.postgres?.cpuUsPerRequest ?? "–"}`,
            ]
          : [
              `${row.api}: ${row.capacity ? `${row.capacity.pollsPerSecondPerInstance} polls + ${row.capacity.reportsPerSecondPerInstance} reports /s per instance` : "no step held"}`,
              `   ${row.saturation ? `saturates at ${row.saturation.rate} req/s` : "held to --max-rate"}; PostgreSQL CPU ${row.capacity?.postgresCpuPercent ?? "–"}%`,
            ],
      ),
    ];
    lines.forEach((line, at) => {
      parts.push(
        `<text x="${x}" y="${bottom + 34 + at * 18}" font-weight="${at === 0 ? "bold" : "normal"}">${escapeXml(line)}</text>`,
      );
    });
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

const thousands = (n: number) => n.toLocaleString("en");

/** The README's headline: the steady phase at the devices' real rate, per database and API. */
export function headlineTable(result: DevicesResult): string {
  const lines = [
    "| PostgreSQL | API | sent (req/s) | answered (req/s) | held | p50 / p99 ms | errors | 304 share | server CPU µs/req | PostgreSQL CPU µs/req (primary + replica) | generator CPU | connections | reads on replica | commits/s · WAL flushes/s | load at start |",
    "|---|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const row of result.headline ?? []) {
    const pg =
      row.postgresCpuUsPerRequest === null
        ? "–"
        : row.replicaCpuUsPerRequest === null
          ? `${row.postgresCpuUsPerRequest}`
          : `${row.postgresCpuUsPerRequest} (${row.primaryCpuUsPerRequest} + ${row.replicaCpuUsPerRequest})`;
    lines.push(
      `| ${row.database === "primary" ? "one" : "primary + replica"} | ${row.api} | ${thousands(row.offeredPerSecond)} | ${thousands(row.answeredPerSecond)} | ${row.held ? "yes" : "no"} | ${thousands(row.p50Ms)} / ${thousands(row.p99Ms)} | ${thousands(row.errors)} | ${Math.round(row.notModifiedShare * 100)}% | ${row.serverCpuUsPerRequest} | ${pg} | ${row.generatorCpuPercent}% | ${row.connections ? `${row.connections.primary}${row.connections.replica === null ? "" : ` + ${row.connections.replica}`}` : "–"} | ${row.replicaStatementShare === null ? "–" : `${Math.round(row.replicaStatementShare * 1000) / 10}% of statements`} | ${row.commitsPerSecond === null ? "–" : `${thousands(row.commitsPerSecond)} · ${thousands(row.walFlushesPerSecond ?? 0)}`} | ${row.loadAverageAtStart ?? "–"} |`,
    );
  }
  return lines.join("\n");
}

/** ARCHITECTURE.md's capacity table, from `result.scaling`. */
export function scalingTableText(result: DevicesResult): string {
  const scaling = result.scaling;
  if (!scaling) return "";
  const lines = [
    "| devices | requests/s | PostgreSQL | instances | primary cores | replica cores | connections (primary + replicas) | disk per server | WAL |",
    "|--:|--:|---|--:|--:|--:|--:|--:|--:|",
  ];
  const add = (label: string, rows: Scaling["primaryOnly"]) => {
    for (const row of rows)
      lines.push(
        `| ${thousands(row.devices)} | ${thousands(row.requestsPerSecond)} | ${label} | ${row.instances} | ${row.primaryCores} | ${row.replicaCores || "–"} | ${row.connectionsPrimary}${row.connectionsReplica ? ` + ${row.connectionsReplica}` : ""} | ${row.diskGB} GB | ${row.walMBPerSecond} MB/s |`,
      );
  };
  add("one primary", scaling.primaryOnly);
  if (scaling.withReplicas) add("primary + replicas", scaling.withReplicas);
  return lines.join("\n");
}

/** The README's rows: one per API and instance count. */
export function devicesTable(result: DevicesResult): string {
  const lines = [
    "| API | PostgreSQL | instances | held at (req/s) | polls/s per instance | reports/s per instance | p99 poll / report ms | 304 share | server CPU | PostgreSQL CPU | saturates at | steady (real rate) p99 poll / report ms |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|",
  ];
  for (const row of result.rows) {
    const best = row.ramp.filter((step) => step.held).at(-1);
    lines.push(
      `| ${row.api} | ${row.database ?? "primary"} | ${row.instances} | ${row.capacity?.rate ?? "–"} | ${row.capacity?.pollsPerSecondPerInstance ?? "–"} | ${row.capacity?.reportsPerSecondPerInstance ?? "–"} | ${best ? `${best.polls.p99Ms} / ${best.reports.p99Ms}` : "–"} | ${best ? `${Math.round(best.notModifiedShare * 100)}%` : "–"} | ${best ? best.servers.cpuPercent.map((p) => `${p}%`).join(" + ") : "–"} | ${best?.postgres ? `${best.postgres.cpuPercent}%` : "–"} | ${row.saturation ? `${row.saturation.rate} req/s (${row.saturation.why})` : "not reached"} | ${row.steady.polls.p99Ms} / ${row.steady.reports.p99Ms} |`,
    );
  }
  return lines.join("\n");
}
