// The migrator applies pending migrations in the order of their names and records each name it
// applied (src/db/migrate.ts). So a name must sort after every migration a database may already
// have applied: one sorting earlier runs last on an existing database and in its place on a fresh
// one, and the two end up different. And a shipped migration keeps its name: renamed, it would be
// applied again.

const NAME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})_[a-z0-9_]+$/;

function validTimestamp(name: string): boolean {
  const match = NAME.exec(name);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Date.UTC rolls an out-of-range part over (the 32nd of a month is the 1st of the next).
  return date.toISOString().slice(0, 19).replace(/\D/g, "") === match.slice(1, 7).join("");
}

/**
 * What breaks the rule, given the migrations shipped so far in the order they were made and the
 * migration folders there are now: empty when names sort in creation order.
 */
export function migrationNameProblems(shipped: readonly string[], present: readonly string[]): string[] {
  const problems: string[] = [];
  for (const name of present) {
    if (!validTimestamp(name)) problems.push(`${name}: not <yyyymmddhhmmss>_<what>, a UTC time`);
  }
  shipped.forEach((name, index) => {
    const before = shipped[index - 1];
    if (before !== undefined && before >= name) problems.push(`${name} does not sort after ${before}`);
    if (!present.includes(name)) {
      problems.push(`${name} is missing: databases have applied it, so it may not be renamed or removed`);
    }
  });
  const newest = shipped.at(-1);
  for (const name of present) {
    if (newest !== undefined && !shipped.includes(name) && name <= newest) {
      problems.push(`${name} sorts before ${newest}: a new migration is named after the newest one`);
    }
  }
  return problems;
}
