import { BadRequest, Conflict } from "../../errors.ts";

// SQLSTATEs of constraint violations, as both drivers report them.
const UNIQUE = "23505";
const FOREIGN_KEY = "23503";
// ON DELETE RESTRICT reports its own code.
const RESTRICT = "23001";
const NOT_NULL = "23502";
const CHECK = "23514";

interface DatabaseError {
  code?: string;
  detail?: string;
  column?: string;
  constraint?: string;
}

/** `Key (device, tag_key)=(1, k) already exists.` → ["device", "tag_key"]: our column names, never the values. */
function keyColumns(detail: string | undefined): string[] {
  const match = /^Key \(([^)]*)\)=/.exec(detail ?? "");
  return match?.[1] ? match[1].split(", ").map((name) => name.replaceAll('"', "")) : [];
}

const quoted = (columns: readonly string[]) => `"${columns.join('", "')}"`;

/**
 * Turns a constraint violation into the typed error the client should see; anything else is rethrown.
 * The database's own texts (its `detail` holds the values of the row) never reach the client: the
 * message names the fields at fault, as the model names them.
 */
export function translateDatabaseError(error: unknown): never {
  const { code, detail, column, constraint } = (error ?? {}) as DatabaseError;
  switch (code) {
    case UNIQUE: {
      // pinejs wire: 409 whose message contains "unique" (pinejs-client's upsert relies on it).
      const columns = keyColumns(detail);
      throw new Conflict(
        columns.length ? `${quoted(columns)} must be unique.` : "Unique key constraint violated",
      );
    }
    case RESTRICT:
    case FOREIGN_KEY: {
      const referencing = /referenced from table "([a-z_]+)"/.exec(detail ?? "")?.[1];
      if (referencing) throw new Conflict(`Data is referenced by ${referencing}.`);
      const columns = keyColumns(detail);
      throw new BadRequest(
        columns.length
          ? `${quoted(columns)} refers to a row that does not exist`
          : "A referenced row does not exist",
      );
    }
    case NOT_NULL:
      throw new BadRequest(`"${column ?? "?"}" cannot be null`);
    case CHECK:
      throw new BadRequest(constraint ? `The rule ${constraint} is not met` : "A check constraint failed");
    default:
      throw error;
  }
}
