// Devices by status per fleet: a stacked bar chart (Chart.js, only the parts a bar chart needs, so
// the bundle carries no other chart type) drawn on a canvas that screen readers read as one image
// with a summary; the same numbers are in the table beside it.
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { useEffect, useRef } from "preact/hooks";
import { statuses } from "../status.ts";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

export interface FleetCounts {
  readonly name: string;
  readonly counts: Readonly<Record<string, number>>;
}

function summary(fleets: readonly FleetCounts[]): string {
  const totals = statuses.map((status) => {
    const count = fleets.reduce((sum, fleet) => sum + (fleet.counts[status.value] ?? 0), 0);
    return `${count} ${status.label.toLowerCase()}`;
  });
  return `Devices by status in ${fleets.length} fleets: ${totals.join(", ")}`;
}

export function StatusChart({ fleets }: { fleets: readonly FleetCounts[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<"bar"> | undefined>(undefined);
  useEffect(() => {
    const data = {
      labels: fleets.map((fleet) => fleet.name),
      datasets: statuses.map((status) => ({
        label: status.label,
        data: fleets.map((fleet) => fleet.counts[status.value] ?? 0),
        backgroundColor: status.color,
      })),
    };
    if (chart.current) {
      chart.current.data = data;
      chart.current.update();
      return;
    }
    if (!canvas.current) return;
    chart.current = new Chart(canvas.current, {
      type: "bar",
      data,
      options: {
        indexAxis: "y",
        animation: false,
        maintainAspectRatio: false,
        scales: { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked: true } },
        plugins: { legend: { position: "bottom" } },
      },
    });
  }, [fleets]);
  useEffect(() => () => chart.current?.destroy(), []);
  return (
    <figure class="chart">
      <div class="chart-box" style={{ height: `${Math.max(160, 60 + fleets.length * 36)}px` }}>
        <canvas ref={canvas} role="img" aria-label={summary(fleets)} data-testid="status-chart" />
      </div>
      <figcaption>Devices by status, per fleet (live)</figcaption>
    </figure>
  );
}
