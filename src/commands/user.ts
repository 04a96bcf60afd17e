import { runCommand } from "./run-command.ts";

export interface NewUser {
  readonly username: string;
  readonly email: string;
  readonly password: string;
  readonly admin: boolean;
}

// `fleetgate user add`: a user and their personal organization.
export async function add(user: NewUser): Promise<void> {
  await runCommand({ command: "user add", user });
}
