import type { DevicesResult, DevicesRow } from "./devices-result.ts";

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

const COLOURS: Record<string, { polls: string; reports: string }> = {
  v2: { polls: "#2e7dd1", reports: "#9cc3ee" },
  v3: { polls: "#2e9d4f", reports: "#a3d9b1" },
};
const BAR = 40;

const capacityOf = (row: DevicesRow) =>
  (row.capacity?.pollsPerSecond ?? 0) + (row.capacity?.reportsPerSecond ?? 0);

/**
 * Per instance count, a bar per API: the requests per second that held p99 within the limit, polls
 * (dark) under reports (light); the real rate of the seeded devices as a dashed line; under each
 * group, where it saturated and PostgreSQL's CPU there.
 */
export function devicesChart(result: DevicesResult): string {
  const counts = [...new Set(result.rows.map((row) => row.instances))];
  const apis = result.config.apis;
  const left = 80;
  const groupWidth = apis.length * (BAR + 16) + 200;
  const width = Math.max(780, left + 40 + counts.length * groupWidth);
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
    `<text x="${left}" y="24" font-size="16" font-weight="bold">${escapeXml(`Device API: requests/s at p99 ≤ ${config.p99LimitMs} ms, ${config.devices.toLocaleString("en")} devices`)}</text>`,
    `<text x="${left}" y="42" fill="#555">${escapeXml(`${result.date.slice(0, 16).replace("T", " ")} UTC, ${machine.cpus} × ${machine.cpuModel}; ${machine.postgres}; one PostgreSQL, ${config.loadProcesses} load process${config.loadProcesses === 1 ? "" : "es"}.`)}</text>`,
    `<text x="${left}" y="58" fill="#555">${escapeXml(`Polls every ${config.pollIntervalS} s (+≤${config.pollJitterS} s), reports every ${config.reportIntervalS} s; ramp ×${config.rampFactor} from ${config.rampFrom} req/s, ${config.stepSeconds} s steps. Dashes: the devices' real rate.`)}</text>`,
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
    const rows = result.rows.filter((row) => row.instances === count);
    rows.forEach((row, at) => {
      const bx = x + at * (BAR + 16);
      const polls = row.capacity?.pollsPerSecond ?? 0;
      const reports = row.capacity?.reportsPerSecond ?? 0;
      const colours = COLOURS[row.api] ?? { polls: "#888", reports: "#ccc" };
      parts.push(
        `<rect x="${bx}" y="${y(polls)}" width="${BAR}" height="${bottom - y(polls)}" fill="${colours.polls}"/>`,
        `<rect x="${bx}" y="${y(polls + reports)}" width="${BAR}" height="${y(polls) - y(polls + reports)}" fill="${colours.reports}"/>`,
        `<text x="${bx + BAR / 2}" y="${y(polls + reports) - 5}" text-anchor="middle" font-size="10">${Math.round(polls + reports)}</text>`,
        `<text x="${bx + BAR / 2}" y="${bottom + 14}" text-anchor="middle">${row.api}</text>`,
      );
    });
    const lines = [
      `${count} instance${count === 1 ? "" : "s"}`,
      ...rows.flatMap((row) => [
        `${row.api}: ${row.capacity ? `${row.capacity.pollsPerSecondPerInstance} polls + ${row.capacity.reportsPerSecondPerInstance} reports /s per instance` : "no step held"}`,
        `   ${row.saturation ? `saturates at ${row.saturation.rate} req/s` : "held to --max-rate"}; PostgreSQL CPU ${row.capacity?.postgresCpuPercent ?? "–"}%`,
      ]),
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

/** The README's rows: one per API and instance count. */
export function devicesTable(result: DevicesResult): string {
  const lines = [
    "| API | instances | held at (req/s) | polls/s per instance | reports/s per instance | p99 poll / report ms | 304 share | server CPU | PostgreSQL CPU | saturates at | steady (real rate) p99 poll / report ms |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|",
  ];
  for (const row of result.rows) {
    const best = row.ramp.filter((step) => step.held).at(-1);
    lines.push(
      `| ${row.api} | ${row.instances} | ${row.capacity?.rate ?? "–"} | ${row.capacity?.pollsPerSecondPerInstance ?? "–"} | ${row.capacity?.reportsPerSecondPerInstance ?? "–"} | ${best ? `${best.polls.p99Ms} / ${best.reports.p99Ms}` : "–"} | ${best ? `${Math.round(best.notModifiedShare * 100)}%` : "–"} | ${best ? best.servers.cpuPercent.map((p) => `${p}%`).join(" + ") : "–"} | ${best?.postgres ? `${best.postgres.cpuPercent}%` : "–"} | ${row.saturation ? `${row.saturation.rate} req/s (${row.saturation.why})` : "not reached"} | ${row.steady.polls.p99Ms} / ${row.steady.reports.p99Ms} |`,
    );
  }
  return lines.join("\n");
}
