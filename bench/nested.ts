import {
  type Answer,
  type Latency,
  median,
  percentile,
  type SerialSettings,
  serial,
  type Target,
} from "./load.ts";
import type { LatencyRow } from "./report.ts";
import type { BenchRequest, Caller } from "./workloads.ts";

// W8 (issue 28, "No small read takes seconds"): filters with counts nested in counts, lambdas, and
// paths through to-one navigations, over the 100 devices of one fleet (of 100,000 devices), with
// `$count=true&$top=2` as in the issue. Generated filters of this kind once ran past the statement
// time-out on a table of 144 devices. Serial requests, each caller's own row; there is no raw
// baseline for these (hand-written SQL for each filter would be a compiler of its own), so W8 is held
// to an absolute time instead: every request well within a second.

/** The filters, over fleet `fleet`: the example (adapted to the bench data) first. */
export function nestedFilters(fleet: string): string[] {
  const example = (first: string) =>
    `belongs_to__application eq ${fleet} and (${first}` +
    ` or manages__device/$count($filter=is_running__release/belongs_to__application/app_name ne '') ne 3` +
    ` and device_tag/$count($filter=device/is_running__release/semver ne '') ge 1` +
    ` or device_tag/$count($filter=device/provisioning_progress eq id) eq 2` +
    ` or manages__device/any(d:d/device_tag/$count ge 1))`;
  return [
    example("last_connectivity_event ne datetime'2024-03-01T00:00:00.001Z'"),
    // The same, with a first disjunct that holds for no device: the rest runs on every one.
    example("last_connectivity_event eq datetime'2024-03-01T00:00:00.001Z'"),
    // A count through a path inside a count: each device's tags, each tag's fleet's devices.
    `belongs_to__application eq ${fleet} and device_tag/$count($filter=device/belongs_to__application/owns__device/$count($filter=is_running__release/semver eq '1.5.0' and is_online) ge 50) eq 2`,
    // Functions that name their arguments more than once in SQL, over counts and paths.
    `belongs_to__application eq ${fleet} and endswith(substring(device_name,device_tag/$count,length(is_running__release/belongs_to__application/app_name)),substring(is_running__release/semver,length(substring(belongs_to__application/app_name,device_tag/$count($filter=value ne 'x'),manages__device/$count add 3))))`,
    // Lambdas over paths of their variables, and a count from a variable's row.
    `belongs_to__application eq ${fleet} and device_tag/all(t:t/device/is_running__release/belongs_to__application/organization/name ne '' and t/device/device_tag/$count ge 2) and is_of__device_type/slug ne 'x'`,
  ];
}

export const NESTED_FILTERS = nestedFilters("0").length;

/** The `index`th request of W8: the filters in turn, each over the next fleet. */
export function nestedRequest(fleetIds: readonly number[], index: number): BenchRequest {
  const filter = nestedFilters(String(fleetIds[(index * 7) % fleetIds.length]))[index % NESTED_FILTERS];
  return {
    method: "GET",
    path: `/v6/device?$select=id&$filter=${encodeURIComponent(filter as string)}&$count=true&$top=2`,
  };
}

/** W8 for each caller (W8 the admin, W8u the member user): serial requests, rounds of them. */
export async function measureNestedFilters(
  fleetIds: readonly number[],
  callers: Readonly<Record<Caller, Target>>,
  settings: SerialSettings,
  log: (message: string) => void,
): Promise<LatencyRow[]> {
  const rows: LatencyRow[] = [];
  for (const [caller, target] of Object.entries(callers) as [Caller, Target][]) {
    const id = caller === "admin" ? "W8" : "W8u";
    let statements = 0;
    const check = (answer: Answer) => {
      if (answer.status !== 200)
        throw new Error(`${id}: HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
      const counted = answer.headers.get("x-sql-statements");
      if (counted !== null) statements = Math.max(statements, Number(counted));
    };
    let next = 0;
    const build = () => nestedRequest(fleetIds, next++);
    // Once through every filter unmeasured: the connections, and each statement's first planning.
    await serial(target, build, NESTED_FILTERS, check);
    const samples: number[] = [];
    const cpu: number[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      const { latencies, cpuUsPerRequest } = await serial(target, build, settings.requests, check);
      samples.push(...latencies);
      cpu.push(cpuUsPerRequest);
      log(
        `${id} round ${round + 1}: p50 ${median(latencies).toFixed(1)} ms, slowest ${Math.max(...latencies).toFixed(1)} ms`,
      );
    }
    const latency: Latency = {
      p50Ms: median(samples),
      p99Ms: percentile(samples, 99),
      cpuUsPerRequest: median(cpu),
    };
    rows.push({
      id,
      group: "W8",
      title: `nested counts and paths, ${NESTED_FILTERS} filters over one fleet, $count=true&$top=2${caller === "user" ? ", as a member user" : ""}`,
      status: "ok",
      fleetgate: latency,
      statements,
    });
  }
  return rows;
}
