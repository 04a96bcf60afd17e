// Reading the README's shell examples: sections by heading, fenced shell blocks, the commands in
// them and the output the README shows for each. Used by readme-examples.test.ts.
//
// The conventions the README follows, so that a test can read it:
// - a ```sh block is run, command by command, in the order the README has them; a block preceded by
//   `<!-- not run: <reason> -->` is not (installing, starting the server itself);
// - what a command prints is shown after it: a comment on its own line (`curl … # OK`), the comment
//   lines right below it (`# 207 […]`), or a ```json block after the block it ends. Comment lines
//   directly followed by a command are a heading for that command, not output;
// - in shown output, `…` stands for what differs on every run (a uuid, a key, a time, an ETag): a
//   string's part (`"6c4f…"`), a value (`"port":…`), members or elements (`{"id":28, …}`, `[…, …]`),
//   or further lines (`# … (one per device)`); text in parentheses after a shown line is a note.

export interface Command {
  /** The command as written, backslash continuations and multi-line quotes included. */
  readonly text: string;
  /** README line of its first line (1-based). */
  readonly line: number;
  /** The output the README shows for it, without the comment signs; empty when it shows none. */
  shown: string[];
  /** A ```json block after the command's block: the whole of what it prints. */
  json?: string;
}

export interface Block {
  readonly section: string;
  readonly line: number;
  /** The reason given in `<!-- not run: … -->`, for blocks that are not run. */
  readonly notRun?: string;
  readonly commands: Command[];
}

interface Line {
  readonly text: string;
  readonly number: number;
}

/** The lines of `heading`'s section (up to the next heading of its level or above), fences kept. */
export function section(readme: string, heading: string): Line[] {
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const lines = readme.split("\n");
  const out: Line[] = [];
  let inside = false;
  let fenced = false;
  for (const [index, text] of lines.entries()) {
    if (/^```/.test(text)) fenced = !fenced;
    const headingLevel = fenced ? 0 : (/^(#+) /.exec(text)?.[1]?.length ?? 0);
    if (inside && headingLevel > 0 && headingLevel <= level) break;
    if (text === heading) inside = true;
    if (inside) out.push({ text, number: index + 1 });
  }
  if (out.length === 0) throw new Error(`README has no section ${heading}`);
  return out;
}

const shellLanguages = new Set(["sh", "bash", "shell"]);

/** The shell blocks of a section, with their commands and shown output. */
export function shellBlocks(heading: string, lines: Line[]): Block[] {
  const blocks: Block[] = [];
  let last: Command | undefined;
  for (let i = 0; i < lines.length; i++) {
    if (/^#+ /.test(lines[i]?.text ?? "")) last = undefined; // an answer is shown under its request's heading
    const open = /^```(\w*)\s*$/.exec(lines[i]?.text ?? "");
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]?.text ?? "")) end++;
    const body = lines.slice(i + 1, end);
    const language = open[1] ?? "";
    if (shellLanguages.has(language)) {
      let before = i - 1;
      while (before >= 0 && (lines[before]?.text ?? "").trim() === "") before--;
      const notRun = /^<!-- not run: (.+) -->$/.exec(lines[before]?.text.trim() ?? "")?.[1];
      const commands = splitCommands(body);
      blocks.push({
        section: heading,
        line: lines[i]?.number ?? 0,
        ...(notRun ? { notRun } : {}),
        commands,
      });
      last = notRun ? undefined : commands.at(-1);
    } else if (language === "json" && last) {
      last.json = body.map((line) => line.text).join("\n");
      last = undefined;
    } else last = undefined;
    i = end;
  }
  return blocks;
}

/** Splits a block into commands: quotes and backslashes continue a command onto the next line. */
function splitCommands(body: Line[]): Command[] {
  const commands: Command[] = [];
  let current: { lines: string[]; line: number; inline?: string } | undefined;
  let quote: "'" | '"' | undefined;
  let comments: string[] = [];
  let commentsFollow: Command | undefined;
  const endComments = (nextIsCommand: boolean) => {
    // Comment lines right after a command, not followed by another command, are its output.
    if (commentsFollow && comments.length > 0 && !nextIsCommand) commentsFollow.shown.push(...comments);
    comments = [];
    commentsFollow = undefined;
  };
  for (const { text, number } of body) {
    if (!current) {
      if (text.trim() === "") {
        endComments(false);
        continue;
      }
      if (text.trimStart().startsWith("#")) {
        comments.push(text.trimStart().replace(/^# ?/, ""));
        continue;
      }
      endComments(true);
      current = { lines: [], line: number };
    }
    let code = text;
    let continued = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quote === "'") {
        if (c === "'") quote = undefined;
      } else if (quote === '"') {
        if (c === "\\") i++;
        else if (c === '"') quote = undefined;
      } else if (c === "\\") {
        if (i === text.length - 1) continued = true;
        i++;
      } else if (c === "'" || c === '"') quote = c;
      else if (c === "#" && (i === 0 || /\s/.test(text[i - 1] ?? ""))) {
        current.inline = text.slice(i + 1).trim();
        code = text.slice(0, i).trimEnd();
        break;
      }
    }
    current.lines.push(code);
    if (quote || continued) continue;
    const command: Command = {
      text: current.lines.join("\n"),
      line: current.line,
      shown: current.inline === undefined ? [] : [current.inline],
    };
    commands.push(command);
    commentsFollow = command;
    current = undefined;
  }
  if (current) throw new Error(`unterminated command at README line ${current.line}`);
  endComments(false);
  return commands;
}
