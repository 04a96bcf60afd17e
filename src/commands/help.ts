import type { Command } from "commander";

// What every command's help and errors have in common: examples at the end, and errors that name
// the command's own help. The commands' names are written as a newcomer runs them (`npx`).

/** `fleetgate catalogue import`, from the command up to the program. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(" ");
}

/** Ends the command's help with its examples (and notes), and points its errors at that help. */
export function documented(command: Command, examples: readonly string[], notes = ""): Command {
  const lines = examples.map((example) => `  ${example}`).join("\n");
  command.addHelpText("after", `${notes ? `\n${notes.trimEnd()}\n` : ""}\nExamples:\n${lines}\n`);
  command.showHelpAfterError(`Run 'npx ${commandPath(command)} --help' to see its options.`);
  return command;
}

/** `(default: …)` for options whose default the command's own parser applies (see givenArgs). */
export const byDefault = (value: string | number): string => ` (default: ${value})`;

/**
 * The options as they were given, back as arguments, for the commands that validate their own
 * flags (`supervisor`, `fleet`: their parsers and defaults are contracts of their own). Commander
 * only recognises the flags, answers --help and names unknown ones.
 */
export function givenArgs(command: Command): string[] {
  const values = command.opts();
  return command.options.flatMap((option) => {
    const value = values[option.attributeName()];
    if (value === undefined || value === false || !option.long) return [];
    return value === true ? [option.long] : [option.long, String(value)];
  });
}

/** The environment variables that choose the database, for the commands that open it. */
export const databaseEnvironment = `Environment:
  DATABASE_URL  PostgreSQL connection URL (default: unset: the embedded database in DATA_DIR)
  DATA_DIR      directory of the embedded database (default: ./data)
While \`fleetgate serve\` holds DATA_DIR, the command runs inside that server and prints the same.`;
