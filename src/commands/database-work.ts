import { createOrganization, createUser } from "../accounts.ts";
import { adminPermissions } from "../auth/permissions.ts";
import { importCatalogue } from "../catalogue/import.ts";
import { readEntries } from "../catalogue/read.ts";
import type { Database } from "../db/database.ts";
import { migrate } from "../db/migrate.ts";
import type { Model } from "../model/types.ts";
import { seedDemo } from "../seed/demo.ts";
import { commandError } from "./command-errors.ts";
import type { CommandRequest } from "./control-protocol.ts";

/**
 * What each database command does on an open database, writing its output to `write`. The CLI runs
 * it on a database it opened itself, and `fleetgate serve` on its own when it holds the directory:
 * one body, so a command prints the same either way.
 */
export async function execute(
  db: Database,
  model: Model,
  request: CommandRequest,
  write: (text: string) => void,
): Promise<void> {
  try {
    await run(db, model, request, write);
  } catch (error) {
    throw commandError(request, error);
  }
}

async function run(
  db: Database,
  model: Model,
  request: CommandRequest,
  write: (text: string) => void,
): Promise<void> {
  const applied = await migrate(db);
  switch (request.command) {
    case "migrate":
      write(applied.length ? `Applied ${applied.join(", ")}\n` : "Database is up to date\n");
      return;
    case "seed":
      write(`${JSON.stringify(await seedDemo(db))}\n`);
      return;
    case "user add": {
      const { user } = request;
      const id = await createUser(db, model, {
        username: user.username,
        email: user.email,
        password: user.password,
        isAdmin: user.admin,
      });
      write(`${JSON.stringify({ id, username: user.username })}\n`);
      return;
    }
    case "org add": {
      const { organization } = request;
      const id = await createOrganization(db, model, {
        handle: organization.handle,
        name: organization.name ?? organization.handle,
        owner: organization.owner,
      });
      write(`${JSON.stringify({ id, handle: organization.handle })}\n`);
      return;
    }
    case "catalogue import":
      write(`${JSON.stringify(await importCatalogue(db, request.catalogue))}\n`);
      return;
    case "catalogue export": {
      // An operator's command: the whole catalogue, private device types included.
      const entries = await readEntries(db, model, adminPermissions);
      write(`${JSON.stringify(entries, null, 2)}\n`);
      return;
    }
  }
}
