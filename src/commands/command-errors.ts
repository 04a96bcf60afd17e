import { clientErrorOf } from "../core/client-errors.ts";
import type { CommandRequest } from "./control-protocol.ts";

// What a command prints when it fails: words an operator can act on, never the database's own
// text (a unique violation's `duplicate key value violates unique constraint "user_username_lower_key"`).

/** The error a database command's work threw, as the operator should read it. */
export function commandError(request: CommandRequest, error: unknown): Error {
  const known = clientErrorOf(error);
  if (!known || known.status >= 500) return error instanceof Error ? error : new Error(String(error));
  if (known.status === 409) {
    const taken = (field: string) => known.message.includes(`"${field}"`);
    if (request.command === "user add") {
      const { user } = request;
      if (taken("username"))
        return new Error(
          `A user named '${user.username}' already exists (usernames are compared without case)`,
        );
      if (taken("email"))
        return new Error(
          `A user with the e-mail address '${user.email}' already exists (compared without case)`,
        );
      if (taken("handle"))
        return new Error(
          `An organization with the handle '${user.username}' already exists; a user's personal organization takes their username as its handle`,
        );
    }
    if (request.command === "org add" && taken("handle"))
      return new Error(`An organization with the handle '${request.organization.handle}' already exists`);
  }
  return new Error(known.message);
}
