import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

// The files a comment cites, so a rename or a removal cannot leave a comment pointing nowhere.
// A cite is a `src/…` path (from the root) or a `./…`, `../…` path (from the file's folder). A
// comment often cites another project's files (open-balena-api's src/features/…): a `src/…` path
// is taken for another project's when its comment names one and its first folder is none of ours.

const OTHER_PROJECTS = /open-balena-api|balena-supervisor|balena-sdk|pinejs|supervisor's|balena's/i;
const CITE = /(?<![\w@/.-])((?:src\/|\.{1,2}\/)[\w.-]+(?:\/[\w.-]+)*\.(?:ts|mjs|js|cjs|json|sql))\b/g;

export interface Cite {
  /** 1-based line of the cite. */
  readonly line: number;
  readonly path: string;
}

/** Comment blocks: runs of lines that are (or end with) a `//` or `/** … *\/` comment. */
function commentBlocks(text: string): { readonly first: number; readonly lines: readonly string[] }[] {
  const blocks: { first: number; lines: string[] }[] = [];
  let open: { first: number; lines: string[] } | undefined;
  let inDoc = false;
  text.split("\n").forEach((line, index) => {
    const trimmed = line.trim();
    const wholeLine = inDoc || trimmed.startsWith("/*") || trimmed.startsWith("//");
    const inline = line.search(/\s\/\/\s/);
    if (trimmed.startsWith("/*") && !trimmed.includes("*/")) inDoc = true;
    else if (inDoc && trimmed.includes("*/")) inDoc = false;
    if (!wholeLine && inline < 0) {
      open = undefined;
      return;
    }
    const part = wholeLine ? line : line.slice(inline);
    if (!open) {
      open = { first: index + 1, lines: [] };
      blocks.push(open);
    }
    open.lines.push(part);
  });
  return blocks;
}

/** The paths the comments of a file cite, other projects' left out. */
export function citesIn(text: string, srcEntries: ReadonlySet<string>): Cite[] {
  const cites: Cite[] = [];
  for (const block of commentBlocks(text)) {
    const foreign = OTHER_PROJECTS.test(block.lines.join(" "));
    block.lines.forEach((line, offset) => {
      for (const match of line.matchAll(CITE)) {
        const path = match[1] as string;
        if (path.startsWith("src/") && foreign && !srcEntries.has(path.split("/")[1] as string)) continue;
        cites.push({ line: block.first + offset, path });
      }
    });
  }
  return cites;
}

/** `file:line cites path` for each cite under `folders` whose file does not exist. */
export function missingCites(root: string, folders: readonly string[]): string[] {
  const srcEntries = new Set(readdirSync(join(root, "src")));
  const missing: string[] = [];
  for (const folder of folders) {
    const files = readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && /\.(?:ts|mjs)$/.test(entry.name))
      .map((entry) => relative(root, join(entry.parentPath, entry.name)))
      .filter((file) => !file.startsWith("src/generated/"));
    for (const file of files) {
      for (const cite of citesIn(readFileSync(join(root, file), "utf8"), srcEntries)) {
        const target = cite.path.startsWith("src/") ? cite.path : normalize(join(dirname(file), cite.path));
        if (!existsSync(join(root, target))) missing.push(`${file}:${cite.line} cites ${cite.path}`);
      }
    }
  }
  return missing;
}
