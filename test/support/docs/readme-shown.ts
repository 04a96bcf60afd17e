// Comparing what a command printed with what the README shows for it (conventions in readme.ts).

const REST = "\u0000rest";
const ANY = "\u0000any";

/** Parses shown JSON, turning its `…` into markers: more members or elements, or any value. */
export function parseShown(text: string): unknown {
  let out = "";
  const stack: string[] = [];
  let previous = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end;
      previous = '"';
      continue;
    }
    if (c === "…") {
      if (previous === ":") out += JSON.stringify({ [ANY]: true });
      else if (stack.at(-1) === "{") out += `${JSON.stringify(REST)}: true`;
      else out += JSON.stringify(REST);
      previous = "…";
      continue;
    }
    if (c === "{" || c === "[") stack.push(c);
    if (c === "}" || c === "]") stack.pop();
    if (!/\s/.test(c)) previous = c;
    out += c;
  }
  return JSON.parse(out);
}

/** Where `actual` differs from `shown` (parsed by parseShown), or undefined when it matches. */
export function differs(shown: unknown, actual: unknown, path = "$"): string | undefined {
  const describe = () => `${path}: README shows ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`;
  if (shown && typeof shown === "object" && !Array.isArray(shown) && ANY in shown) return undefined;
  if (typeof shown === "string" && shown.includes("…")) {
    const pattern = shown
      .split("…")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("[\\s\\S]*");
    return typeof actual === "string" && new RegExp(`^${pattern}$`).test(actual) ? undefined : describe();
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return describe();
    const rest = shown.includes(REST);
    const items = shown.filter((item) => item !== REST);
    if (rest ? actual.length < items.length : actual.length !== items.length)
      return `${path}: README shows ${items.length}${rest ? " or more" : ""} items, got ${actual.length}: ${JSON.stringify(actual)}`;
    // Shown items before the `…` are the first ones, after it the last ones.
    const at = shown.indexOf(REST);
    for (const [index, item] of items.entries()) {
      const actualIndex = rest && index >= at ? actual.length - (items.length - index) : index;
      const problem = differs(item, actual[actualIndex], `${path}[${actualIndex}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (shown && typeof shown === "object") {
    if (!actual || typeof actual !== "object" || Array.isArray(actual)) return describe();
    const rest = REST in shown;
    for (const [key, value] of Object.entries(shown)) {
      if (key === REST) continue;
      if (!(key in actual))
        return `${path}: README shows member ${key}, missing from ${JSON.stringify(actual)}`;
      const problem = differs(value, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (problem) return problem;
    }
    if (!rest) {
      const extra = Object.keys(actual).filter((key) => !(key in shown));
      if (extra.length > 0) return `${path}: members the README does not show: ${extra.join(", ")}`;
    }
    return undefined;
  }
  return Object.is(shown, actual) ? undefined : describe();
}

/** What running a command gave. */
export interface Outcome {
  readonly stdout: string;
  /** The HTTP status of each curl transfer, in order. */
  readonly statuses: number[];
  /** null while it still runs. */
  readonly exitCode: number | null;
}

/** Splits `<JSON> (note)` into the JSON text; a line of only `…` (and a note) is "more lines". */
function withoutNote(line: string): string {
  return line.replace(/\s+\([^()]*(?:\([^()]*\)[^()]*)*\)$/, "").trim();
}

function matchLines(shown: string[], actual: string[]): string | undefined {
  const more = shown.some((line) => withoutNote(line) === "…");
  const expected = shown.filter((line) => withoutNote(line) !== "…");
  if (more ? actual.length < expected.length : actual.length !== expected.length)
    return `README shows ${expected.length}${more ? " or more" : ""} lines, got ${actual.length}:\n${actual.join("\n")}`;
  for (const [index, line] of expected.entries()) {
    const text = withoutNote(line);
    const got = actual[index] ?? "";
    if (text.startsWith("{") || text.startsWith("[")) {
      let value: unknown;
      try {
        value = JSON.parse(got);
      } catch {
        return `line ${index + 1} is not JSON: ${got}`;
      }
      const problem = differs(parseShown(text), value);
      if (problem) return problem;
    } else if (text !== got.trim()) return `README shows ${JSON.stringify(text)}, got ${JSON.stringify(got)}`;
  }
  return undefined;
}

/** A Server-Sent Events stream: each shown event appears, in order, among the events received. */
function matchEvents(shown: string[], stdout: string): string | undefined {
  const events = (text: string) =>
    text
      .replace(/\r/g, "")
      .split(/\n\n+/)
      .map((event) => event.split("\n").filter(Boolean))
      .filter((event) => event.length > 0);
  const received = events(stdout);
  let from = 0;
  const expected = shown.filter((line) => withoutNote(line) !== "…");
  for (const event of events(expected.join("\n"))) {
    const found = received.findIndex(
      (got, index) =>
        index >= from &&
        got.length === event.length &&
        matchLines(event.map(dataJson), got.map(dataJson)) === undefined,
    );
    if (found < 0) return `no event ${JSON.stringify(event)} after event ${from} of:\n${stdout}`;
    from = found + 1;
  }
  return undefined;
}

/** `data: {…}` compared as its JSON. */
function dataJson(line: string): string {
  return line.startsWith("data: ") ? line.slice("data: ".length) : line;
}

/** Whether `outcome` shows what the README shows; the problem when not. */
export function compare(command: { shown: string[]; json?: string }, outcome: Outcome): string | undefined {
  let lines = [...command.shown];
  let statuses: number[] | undefined;
  let headers: [string, string][] = [];
  let stdout = outcome.stdout;
  const http = /^HTTP\/[\d.]+ (\d{3})\b/.exec(lines[0] ?? "");
  if (http) {
    statuses = [Number(http[1])];
    lines.shift();
    while (lines[0] && /^[\w-]+: /.test(lines[0])) {
      const [name, ...value] = (lines.shift() ?? "").split(": ");
      headers.push([(name ?? "").toLowerCase(), value.join(": ")]);
    }
    const head = stdout.indexOf("\r\n\r\n");
    const received = stdout.slice(0, head).split("\r\n");
    stdout = stdout.slice(head + 4);
    for (const [name, value] of headers) {
      const got = received.find((line) => line.toLowerCase().startsWith(`${name}: `))?.slice(name.length + 2);
      if (got === undefined || differs(value, got) !== undefined)
        return `README shows header ${name}: ${value}, got ${got ?? "none"}`;
    }
    if (!new RegExp(`^HTTP/[\\d.]+ ${statuses[0]}\\b`).test(received[0] ?? ""))
      return `README shows ${command.shown[0]}, got ${received[0]}`;
    headers = [];
  } else {
    const status = /^(\d{3}(?:(?:,? or |, )\d{3})*)(?:\s+(.*))?$/.exec(lines[0] ?? "");
    if (status) {
      statuses = (status[1] ?? "").match(/\d{3}/g)?.map(Number) ?? [];
      // What follows the status is the body, unless it is only a note: `# 200, or 400 (once …)`.
      const rest = status[2] && withoutNote(`x ${status[2]}`) !== "x" ? [status[2]] : [];
      lines = [...rest, ...lines.slice(1)];
    }
  }
  const allowed = statuses ?? [];
  const failed = outcome.statuses.filter((code) =>
    statuses ? !allowed.includes(code) : code >= 400 || code === 0,
  );
  if (statuses && outcome.exitCode !== null && !allowed.includes(outcome.statuses.at(-1) ?? 0))
    return `README shows status ${allowed.join(" or ")}, got ${outcome.statuses.join(", ")}`;
  if (!statuses && failed.length > 0)
    return `a request failed: status ${outcome.statuses.join(", ")}; printed:\n${stdout}`;
  if (outcome.exitCode !== null && outcome.exitCode !== 0)
    return `exit code ${outcome.exitCode}; printed:\n${stdout}`;
  if (command.json !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(stdout);
    } catch {
      return `not JSON: ${stdout}`;
    }
    return differs(parseShown(command.json), value);
  }
  if (lines.length === 0) return undefined;
  if (lines[0] === ":") return matchEvents(lines, stdout);
  return matchLines(
    lines,
    stdout
      .replace(/\r/g, "")
      .split("\n")
      .filter((line) => line.trim() !== ""),
  );
}
