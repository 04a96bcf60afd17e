import { type RunResult, targets } from "./report.ts";

interface Bar {
  readonly label: string;
  readonly value: number | undefined;
  readonly target: number;
  /** "min": the ratio must reach the target (throughput); "max": stay under it (time). */
  readonly kind: "min" | "max";
}

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

function bars(result: RunResult): Bar[] {
  const throughput = result.loads.map((row) => ({
    label: row.id,
    value: row.ratio,
    target: targets[row.group as "W1" | "W2" | "W4"],
    kind: "min" as const,
  }));
  const time = result.latencies.map((row) => ({
    label: row.id,
    value: row.ratio,
    target: targets[row.group as "W3" | "W5"],
    kind: "max" as const,
  }));
  return [...throughput, ...time];
}

/** A bar chart of each workload's ratio to the baseline, with its target marked on its bar. */
export function chart(result: RunResult): string {
  const items = bars(result);
  const width = 120 + items.length * 80;
  const height = 440;
  const top = 70;
  const bottom = 360;
  const left = 70;
  const top_value = Math.max(1.5, ...items.map((item) => Math.max(item.value ?? 0, item.target))) * 1.1;
  const y = (value: number) => bottom - (value / top_value) * (bottom - top);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="bold">fleetgate ÷ raw node:http + pg baseline, per workload</text>`,
    `<text x="${left}" y="44" fill="#555">${escapeXml(`${result.date.slice(0, 10)}, ${result.mode} run, ${result.machine.cpus} × ${result.machine.cpuModel}. Throughput (W1, W2, W4): higher is better; time (W3, W5): lower is better. Dashes: target.`)}</text>`,
  ];
  // Gridlines every 0.25×, labelled every 0.5×.
  for (let tick = 0; tick <= top_value; tick += 0.25) {
    const at = y(tick);
    const labelled = Math.abs(tick * 2 - Math.round(tick * 2)) < 1e-9;
    parts.push(
      `<line x1="${left}" x2="${width - 20}" y1="${at}" y2="${at}" stroke="${tick === 1 ? "#333" : "#e5e5e5"}" stroke-width="${tick === 1 ? 1.5 : 1}"/>`,
    );
    if (labelled)
      parts.push(`<text x="${left - 8}" y="${at + 4}" text-anchor="end">${tick.toFixed(1)}×</text>`);
  }
  parts.push(`<text x="${width - 22}" y="${y(1) - 5}" text-anchor="end" fill="#333">baseline = 1×</text>`);
  items.forEach((item, index) => {
    const x = left + 20 + index * 80;
    const passed =
      item.value === undefined
        ? undefined
        : item.kind === "min"
          ? item.value >= item.target
          : item.value <= item.target;
    const colour = passed === undefined ? "#bbb" : passed ? "#2e9d4f" : "#d2423a";
    if (item.value !== undefined) {
      parts.push(
        `<rect x="${x}" y="${y(item.value)}" width="44" height="${bottom - y(item.value)}" fill="${colour}"/>`,
      );
      parts.push(
        `<text x="${x + 22}" y="${y(item.value) - 6}" text-anchor="middle" font-weight="bold">${item.value.toFixed(2)}</text>`,
      );
    } else {
      parts.push(`<text x="${x + 22}" y="${bottom - 6}" text-anchor="middle" fill="#888">n/a</text>`);
    }
    const at = y(item.target);
    parts.push(
      `<line x1="${x - 8}" x2="${x + 52}" y1="${at}" y2="${at}" stroke="#1f4fbf" stroke-width="2" stroke-dasharray="5,3"/>`,
    );
    parts.push(
      `<text x="${x + 54}" y="${at + 4}" fill="#1f4fbf" font-size="10">${item.kind === "min" ? "≥" : "≤"}${item.target}</text>`,
    );
    parts.push(`<text x="${x + 22}" y="${bottom + 18}" text-anchor="middle">${escapeXml(item.label)}</text>`);
  });
  const extra = [
    result.coldStart
      ? `W6 cold start ${result.coldStart.postgresMs.toFixed(0)} ms on PostgreSQL (target ≤ ${targets.W6Ms})`
      : "W6 skipped",
    result.memory
      ? `W7 RSS ${result.memory.afterAllMiB.toFixed(0)} MiB after load (target ≤ ${targets.W7MiB})`
      : "W7 skipped",
  ].join(";  ");
  parts.push(`<text x="${left}" y="${bottom + 50}" fill="#333">${escapeXml(extra)}</text>`);
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
