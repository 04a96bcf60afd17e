import { type RunResult, targets, throughputTarget } from "./report.ts";

interface Group {
  readonly label: string;
  /** fleetgate ÷ baseline. */
  readonly value: number | undefined;
  readonly target: number;
  /** "min": the ratio must reach the target (throughput); "max": stay under it (time). */
  readonly kind: "min" | "max";
  /** Peers measured on this workload, by label: their ratio to the same baseline. */
  readonly peers: readonly { label: string; value: number | undefined }[];
}

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

const BASELINE = "#9e9e9e";
const PEER_COLOURS = ["#7b4fc9", "#c98a1f"];
const BAR = 22;

function groups(result: RunResult): Group[] {
  const throughput = result.loads.map((row) => ({
    label: row.id,
    value: row.ratio,
    target: throughputTarget(row),
    kind: "min" as const,
    peers: (row.peers ?? []).map((peer) => ({ label: peer.label, value: peer.ratio })),
  }));
  // W8 is held to a time, not to a ratio: it has no bar here.
  const time = result.latencies
    .filter((row) => row.group === "W3" || row.group === "W5")
    .map((row) => ({
      label: row.id,
      value: row.ratio,
      target: targets[row.group as "W3" | "W5"],
      kind: "max" as const,
      peers: [],
    }));
  return [...throughput, ...time];
}

/**
 * Each workload as a group of bars, ratios to the baseline measured in the same rounds: the
 * baseline (1×), fleetgate (green when it meets its target, dashed, red when not) and each peer.
 */
export function chart(result: RunResult): string {
  const items = groups(result);
  const peerLabels = [...new Set(items.flatMap((item) => item.peers.map((peer) => peer.label)))];
  const bars = 2 + peerLabels.length;
  const groupWidth = bars * BAR + 30;
  const left = 70;
  const width = Math.max(760, left + 20 + items.length * groupWidth + 40);
  const height = 460;
  const top = 100;
  const bottom = 380;
  const topValue =
    Math.max(
      1.5,
      ...items.flatMap((item) => [item.value ?? 0, item.target, ...item.peers.map((p) => p.value ?? 0)]),
    ) * 1.1;
  const y = (value: number) => bottom - (value / topValue) * (bottom - top);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="bold">${escapeXml(`fleetgate${peerLabels.length ? `, ${peerLabels.join(", ")}` : ""} and the raw node:http + pg baseline, per workload`)}</text>`,
    `<text x="${left}" y="42" fill="#555">${escapeXml(`${result.date.slice(0, 10)}, ${result.mode} run, ${result.machine.cpus} × ${result.machine.cpuModel}; ratios to the baseline measured in the same rounds.`)}</text>`,
    `<text x="${left}" y="58" fill="#555">${escapeXml("Throughput (W1, W2, W4): higher is better; time (W3, W5): lower is better. Dashes: fleetgate's target.")}</text>`,
  ];
  // Legend.
  const legend = [
    { label: "baseline", colour: BASELINE },
    { label: "fleetgate (green: meets its target, red: not)", colour: "#2e9d4f" },
    ...peerLabels.map((label, index) => ({ label, colour: PEER_COLOURS[index % PEER_COLOURS.length] })),
  ];
  let legendX = left;
  for (const entry of legend) {
    parts.push(`<rect x="${legendX}" y="68" width="12" height="12" fill="${entry.colour}"/>`);
    parts.push(`<text x="${legendX + 16}" y="78">${escapeXml(entry.label)}</text>`);
    legendX += 30 + entry.label.length * 6.5;
  }
  // Gridlines every 0.25×, labelled every 0.5×.
  for (let tick = 0; tick <= topValue; tick += 0.25) {
    const at = y(tick);
    const labelled = Math.abs(tick * 2 - Math.round(tick * 2)) < 1e-9;
    parts.push(
      `<line x1="${left}" x2="${width - 20}" y1="${at}" y2="${at}" stroke="${tick === 1 ? "#333" : "#e5e5e5"}" stroke-width="${tick === 1 ? 1.5 : 1}"/>`,
    );
    if (labelled)
      parts.push(`<text x="${left - 8}" y="${at + 4}" text-anchor="end">${tick.toFixed(1)}×</text>`);
  }
  const bar = (x: number, value: number | undefined, colour: string, labelled = true) => {
    if (value === undefined) {
      parts.push(`<text x="${x + BAR / 2}" y="${bottom - 6}" text-anchor="middle" fill="#888">n/a</text>`);
      return;
    }
    parts.push(
      `<rect x="${x}" y="${y(value)}" width="${BAR - 2}" height="${bottom - y(value)}" fill="${colour}"/>`,
    );
    if (labelled)
      parts.push(
        `<text x="${x + BAR / 2 - 1}" y="${y(value) - 5}" text-anchor="middle" font-size="10" font-weight="bold">${value.toFixed(2)}</text>`,
      );
  };
  items.forEach((item, index) => {
    const x = left + 20 + index * groupWidth;
    const passed =
      item.value === undefined
        ? undefined
        : item.kind === "min"
          ? item.value >= item.target
          : item.value <= item.target;
    bar(x, 1, BASELINE, false);
    bar(x + BAR, item.value, passed === undefined ? "#bbb" : passed ? "#2e9d4f" : "#d2423a");
    peerLabels.forEach((label, peerIndex) => {
      const peer = item.peers.find((p) => p.label === label);
      if (peer)
        bar(x + (2 + peerIndex) * BAR, peer.value, PEER_COLOURS[peerIndex % PEER_COLOURS.length] as string);
    });
    const at = y(item.target);
    parts.push(
      `<line x1="${x + BAR - 4}" x2="${x + 2 * BAR + 2}" y1="${at}" y2="${at}" stroke="#1f4fbf" stroke-width="2" stroke-dasharray="4,2"/>`,
    );
    parts.push(
      `<text x="${x + BAR}" y="${at - 3}" fill="#1f4fbf" font-size="9">${item.kind === "min" ? "≥" : "≤"}${item.target}</text>`,
    );
    parts.push(
      `<text x="${x + (bars * BAR) / 2}" y="${bottom + 18}" text-anchor="middle">${escapeXml(item.label)}</text>`,
    );
  });
  const extra = [
    result.coldStart
      ? `W6 cold start ${result.coldStart.postgresMs.toFixed(0)} ms on PostgreSQL (target ≤ ${targets.W6Ms})`
      : "W6 skipped",
    result.memory
      ? `W7 RSS ${result.memory.afterAllMiB.toFixed(0)} MiB after all workloads (target ≤ ${targets.W7MiB})`
      : "W7 skipped",
  ].join(";  ");
  parts.push(`<text x="${left}" y="${bottom + 50}" fill="#333">${escapeXml(extra)}</text>`);
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
