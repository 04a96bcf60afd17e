import type { Simulator } from "./jobs-devices.ts";

/** One row of the jobs bench: a fleet size on one or two instances. */
export interface JobsRow {
  readonly devices: number;
  readonly simulator: Simulator;
  readonly instances: number;
  /** The raw keep-alive fan-out of the same devices, each run, and how many did not answer 200. */
  readonly rawFanOutMs: readonly number[];
  readonly rawFanOutFailed: readonly number[];
  readonly submitMs: readonly number[];
  /** From submission to the job's finished_at, as the client polling it saw it. */
  readonly finishMs: readonly number[];
  readonly finishMsMedian: number;
  /** finishMsMedian ÷ the raw fan-out's median. */
  readonly ratioToRaw: number;
  readonly statuses: readonly string[];
  readonly ok: readonly number[];
  /** Each run, each instance: RSS at submission, the largest sampled (every 100 ms), at the end. */
  readonly rssMiB: readonly (readonly { start: number; peak: number; end: number }[])[];
  /** Each run: where the time went, from the job's rows (jobs.ts `JobPhases`). */
  readonly phasesMs: readonly JobPhases[];
}

/**
 * A job's course by the database's clock, in ms from its `created_at`: when its result rows were
 * written, when the first answers were written, half and all of them. Answers are written in bulk
 * (every 100 ms, or 500 at a time), so an answer's time is its batch's.
 */
export interface JobPhases {
  readonly rowsWritten: number;
  readonly firstAnswer: number;
  readonly halfAnswered: number;
  readonly allAnswered: number;
}

export interface JobsResult {
  readonly date: string;
  readonly machine: string;
  readonly runs: number;
  readonly concurrency: number;
  readonly batch: number;
  readonly oneDeviceSubmitMs: { readonly p50: number; readonly p99: number };
  readonly rows: readonly JobsRow[];
}

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

const COLOURS = { raw: "#9e9e9e", one: "#2e7dd1", two: "#2e9d4f" };
const BAR = 34;

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * Each fleet size as a group of bars, times to finish as ratios to the raw fan-out of the same
 * devices measured in the same run (1×); under each group, the submission times and the servers'
 * RSS.
 */
export function jobsChart(result: JobsResult): string {
  const sizes = [...new Set(result.rows.map((row) => row.devices))];
  const left = 70;
  const groupWidth = 3 * BAR + 170;
  const width = Math.max(760, left + 40 + sizes.length * groupWidth);
  const top = 100;
  const bottom = 360;
  const height = bottom + 40 + 18 * 5;
  const topValue = Math.max(2, ...result.rows.map((row) => row.ratioToRaw)) * 1.15;
  const y = (value: number) => bottom - (value / topValue) * (bottom - top);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="bold">Command jobs: time to finish ÷ a raw keep-alive fan-out of the same devices</text>`,
    `<text x="${left}" y="42" fill="#555">${escapeXml(`${result.date.slice(0, 10)}, ${result.machine}; ${result.runs} run(s) each, medians; COMMAND_JOB_CONCURRENCY = fan-out concurrency = ${result.concurrency}.`)}</text>`,
    `<text x="${left}" y="58" fill="#555">Lower is better; 1× is the raw fan-out.</text>`,
  ];
  let legendX = left;
  for (const [label, colour] of [
    ["raw fan-out", COLOURS.raw],
    ["job, 1 instance", COLOURS.one],
    ["job, 2 instances", COLOURS.two],
  ] as const) {
    parts.push(`<rect x="${legendX}" y="68" width="12" height="12" fill="${colour}"/>`);
    parts.push(`<text x="${legendX + 16}" y="78">${label}</text>`);
    legendX += 40 + label.length * 6.5;
  }
  for (let tick = 0; tick <= topValue; tick += topValue > 8 ? 2 : 1) {
    const at = y(tick);
    parts.push(
      `<line x1="${left}" x2="${width - 20}" y1="${at}" y2="${at}" stroke="${tick === 1 ? "#333" : "#e5e5e5"}"/>`,
    );
    parts.push(`<text x="${left - 8}" y="${at + 4}" text-anchor="end">${tick}×</text>`);
  }
  sizes.forEach((size, index) => {
    const x = left + 20 + index * groupWidth;
    const rows = result.rows.filter((row) => row.devices === size);
    const raw = median(rows.flatMap((row) => row.rawFanOutMs));
    const bars = [
      { value: 1, label: seconds(raw), colour: COLOURS.raw },
      ...rows.map((row) => ({
        value: row.ratioToRaw,
        label: `${row.ratioToRaw.toFixed(1)}× ${seconds(row.finishMsMedian)}`,
        colour: row.instances === 1 ? COLOURS.one : COLOURS.two,
      })),
    ];
    bars.forEach((bar, at) => {
      const bx = x + at * (BAR + 20);
      parts.push(
        `<rect x="${bx}" y="${y(bar.value)}" width="${BAR}" height="${bottom - y(bar.value)}" fill="${bar.colour}"/>`,
      );
      parts.push(
        `<text x="${bx + BAR / 2}" y="${y(bar.value) - 5}" text-anchor="middle" font-size="10">${escapeXml(bar.label)}</text>`,
      );
    });
    const simulator = rows[0]?.simulator ?? "";
    const lines = [
      `${size.toLocaleString("en")} devices (${simulator})`,
      ...rows.map(
        (row) =>
          `${row.instances} inst.: submit ${median(row.submitMs).toFixed(0)} ms, RSS peak ${row.rssMiB
            .map((run) => run.map((instance) => instance.peak.toFixed(0)).join("+"))
            .join(" / ")} MiB`,
      ),
    ];
    lines.forEach((line, at) => {
      parts.push(
        `<text x="${x}" y="${bottom + 20 + at * 18}" font-weight="${at === 0 ? "bold" : "normal"}">${escapeXml(line)}</text>`,
      );
    });
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
