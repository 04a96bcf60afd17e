import { runCommand } from "./run-command.ts";

export interface NewOrganization {
  readonly handle: string;
  readonly name?: string | undefined;
  readonly owner?: string | undefined;
}

// `fleetgate org add`: an organization, optionally with its first owner.
export async function add(organization: NewOrganization): Promise<void> {
  await runCommand({ command: "org add", organization });
}
