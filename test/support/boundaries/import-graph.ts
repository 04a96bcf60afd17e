import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** Each source file (relative to the root, `src/core/plan.ts`) and the project files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

// Static imports and re-exports (`import type` included: a type cycle is still a cycle for a
// reader), imports for their side effects, and dynamic `import("…")`; only relative specifiers
// name project files.
const specifiers = [
  /(?:^|[\s;])(?:import|export)\s[^;"']*?from\s*["'](\.{1,2}\/[^"']+)["']/g,
  /(?:^|[\s;])import\s*["'](\.{1,2}\/[^"']+)["']/g,
  /import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g,
];

function sourceFiles(root: string, folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** The import graph of the `.ts` files under `folders`, leaving out those under `excluded`. */
export function importGraph(
  root: string,
  folders: readonly string[],
  excluded: readonly string[],
): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of folders.flatMap((folder) => sourceFiles(root, folder))) {
    if (excluded.some((folder) => file.startsWith(`${folder}/`))) continue;
    const text = readFileSync(join(root, file), "utf8");
    const imported = specifiers.flatMap((pattern) =>
      [...text.matchAll(pattern)].map((match) =>
        relative(root, resolve(root, dirname(file), match[1] as string)),
      ),
    );
    graph.set(file, imported);
  }
  return graph;
}

/** Every import cycle, each as the files along it (Tarjan's strongly connected components). */
export function cycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) as number, index.get(next) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.reverse());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** `src/core/plan.ts` → `core`; `src/config.ts` → `config`; `package.json` → `package.json`. */
export function layerOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] !== "src") return parts[0] as string;
  return parts.length > 2 ? (parts[1] as string) : (parts[1] as string).replace(/\.ts$/, "");
}

/**
 * Imports that cross into a layer the importing one may not use: `allowed` lists, per layer, the
 * layers it may import besides its own.
 */
export function forbiddenImports(
  graph: ImportGraph,
  allowed: Readonly<Record<string, readonly string[]>>,
): string[] {
  const found: string[] = [];
  for (const [file, imported] of graph) {
    const from = layerOf(file);
    const may = allowed[from];
    for (const target of imported) {
      const to = layerOf(target);
      if (to === from) continue;
      if (!may) found.push(`${file}: layer '${from}' is not in the layer table`);
      else if (!may.includes(to)) found.push(`${file} imports ${target}: '${from}' may not import '${to}'`);
    }
  }
  return found;
}

/** Each import of a file under `from` (a folder, `src/graphql/schema/`) of a file under `to`. */
export function importsInto(graph: ImportGraph, from: string, to: string): string[] {
  const found: string[] = [];
  for (const [file, imported] of graph) {
    if (!file.startsWith(from)) continue;
    for (const target of imported) if (target.startsWith(to)) found.push(`${file} imports ${target}`);
  }
  return found;
}

/**
 * The longest chain of imports from `entry` through the files under `within`, as the files along
 * it, `entry` first. The graph has no cycle (a rule of its own), so each file's longest chain is
 * found once.
 */
export function longestChain(graph: ImportGraph, entry: string, within: string): string[] {
  const longest = new Map<string, string[]>();
  const from = (file: string): string[] => {
    const known = longest.get(file);
    if (known) return known;
    longest.set(file, [file]);
    let below: string[] = [];
    for (const next of graph.get(file) ?? []) {
      if (!next.startsWith(within) || !graph.has(next)) continue;
      const chain = from(next);
      if (chain.length > below.length) below = chain;
    }
    const chain = [file, ...below];
    longest.set(file, chain);
    return chain;
  };
  return from(entry);
}
