import { type RunningSupervisor, startSupervisor } from "../supervisor/agent.ts";
import { parseSupervisorArgs } from "../supervisor/options.ts";

// `fleetgate supervisor`: one simulated device. Prints one JSON line once it listens,
// so whoever started it (a person, a test, a script) learns its port and key.
export async function run(args: string[]): Promise<void> {
  const log = (message: string) =>
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), msg: message })}\n`);
  let supervisor: RunningSupervisor | undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await supervisor?.close();
    process.exit(0);
  };
  // Before the JSON line: whoever reads it may signal at once.
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
  const options = { ...parseSupervisorArgs(args, process.env, log), onShutdown: () => void stop() };
  supervisor = await startSupervisor(options);
  process.stdout.write(
    `${JSON.stringify({ uuid: supervisor.uuid, port: supervisor.port, apiKey: supervisor.device.apiKey })}\n`,
  );
}
