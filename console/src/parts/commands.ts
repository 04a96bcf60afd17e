// The supervisor commands the console sends, each as a job (`async: true`) so its progress streams.
import { gql } from "@urql/core";

export interface CommandSpec {
  readonly value: string;
  readonly label: string;
  readonly field: string;
  readonly force: boolean;
  /** Interrupts what the devices run: the console asks first, naming the targets. */
  readonly destructive: string | undefined;
}

export const commands: readonly CommandSpec[] = [
  { value: "blink", label: "Blink", field: "supervisorBlink", force: false, destructive: undefined },
  {
    value: "update",
    label: "Check for updates",
    field: "supervisorUpdate",
    force: true,
    destructive: undefined,
  },
  {
    value: "restart",
    label: "Restart the application",
    field: "supervisorRestart",
    force: false,
    destructive: "restarts the application on",
  },
  { value: "reboot", label: "Reboot", field: "supervisorReboot", force: true, destructive: "reboots" },
  {
    value: "purge",
    label: "Purge application data",
    field: "supervisorPurge",
    force: false,
    destructive: "deletes the application's data on",
  },
];

export function commandMutation(spec: CommandSpec) {
  const force = spec.force ? ", $force: Boolean" : "";
  return gql(`
    mutation ConsoleCommand($target: SupervisorTarget!, $key: String${force}) {
      sent: ${spec.field}(target: $target, async: true, idempotencyKey: $key${spec.force ? ", force: $force" : ""}) {
        targets
        job { id status targetedCount doneCount }
      }
    }
  `);
}

export const JOB = gql(`
  subscription ConsoleJob($id: Int!) {
    commandJob(id: $id) { id status targetedCount doneCount okCount failedCount skippedCount pendingCount }
  }
`);

export const JOB_RESULTS = gql(`
  query ConsoleJobResults($ids: [Int!]!) {
    commandJobs(where: { id: { in: $ids } }) {
      id path status
      commandResult(first: 1000, orderBy: [{ id: ASC }]) { id status statusCode error device { id deviceName uuid } }
    }
  }
`);

export const PAST_JOBS = gql(`
  query ConsolePastJobs {
    commandJobs(first: 20, orderBy: [{ createdAt: DESC }]) {
      id path status target createdAt finishedAt targetedCount okCount failedCount skippedCount
    }
  }
`);

export const FLEET_CHOICES = gql(`
  query ConsoleCommandFleets { myApplications(orderBy: [{ appName: ASC }]) { id appName } }
`);

export const ONLINE_DEVICES = gql(`
  query ConsoleOnlineDevices($fleet: Int!) {
    devices(where: { belongsToApplicationId: { eq: $fleet }, isOnline: { eq: true } }, first: 200, orderBy: [{ deviceName: ASC }]) {
      id deviceName uuid
    }
  }
`);

export const finalStatuses = new Set(["succeeded", "partially_failed", "failed", "cancelled"]);

export interface JobCounts {
  id: number;
  status: string;
  targetedCount: number;
  doneCount: number;
  okCount: number;
  failedCount: number;
  skippedCount: number;
}
