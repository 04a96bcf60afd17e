import { z } from "zod";
import { BadRequest } from "../errors.ts";
import { configDocumentSchema } from "./document.ts";
import { checkCatalogueRules } from "./rules.ts";
import { type CatalogueEntry, catalogueEntrySchema } from "./schema.ts";

export interface CatalogueFile {
  readonly entries: CatalogueEntry[];
  /** Where entry `index` sits in the file (`deviceTypes[3]` or `[3]`), for errors found later. */
  readonly pathOf: (index: number) => string;
}

const entryList = z.array(catalogueEntrySchema).superRefine(checkCatalogueRules);

// A whole document may be partial (only deviceTypes is needed), but what it has must be valid.
const document = configDocumentSchema.partial().extend({ deviceTypes: entryList });

/** `deviceTypes[3].options[1].options[0].min`: the path as one would write it in JavaScript. */
export function jsonPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`))
    .join("");
}

function describe(issue: z.core.$ZodIssue): string {
  // An unknown member is named by its own path, not its parent's.
  const paths =
    issue.code === "unrecognized_keys" ? issue.keys.map((key) => [...issue.path, key]) : [issue.path];
  const message = issue.code === "unrecognized_keys" ? "unknown member" : issue.message;
  return paths.map((path) => `${jsonPath(path) || "(the file)"}: ${message}`).join("\n  ");
}

/** Validates a whole document (`{deviceTypes: […], …}`) or a list of entries; throws naming each path. */
export function parseCatalogueFile(json: unknown): CatalogueFile {
  const isList = Array.isArray(json);
  if (!isList && (typeof json !== "object" || json === null))
    throw new BadRequest("A catalogue is a document {deviceTypes: […]} or a list of entries");
  const parsed = isList ? entryList.safeParse(json) : document.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(describe);
    throw new BadRequest(`Invalid catalogue:\n  ${problems.join("\n  ")}`);
  }
  const entries = Array.isArray(parsed.data) ? parsed.data : parsed.data.deviceTypes;
  return { entries, pathOf: (index) => (isList ? `[${index}]` : `deviceTypes[${index}]`) };
}
