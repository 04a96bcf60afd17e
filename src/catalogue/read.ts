import type { Permissions } from "../auth/permissions.ts";
import type { Expr } from "../core/query.ts";
import { readRows } from "../core/read.ts";
import type { Executor } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import type { CatalogueEntry } from "./schema.ts";

interface Row {
  slug: string;
  name: string;
  state: CatalogueEntry["state"];
  is_private: boolean;
  logo: string | null;
  catalogue: Record<string, unknown>;
  arch: CatalogueEntry["arch"];
  aliases: { is_referenced_by__alias: string }[];
}

/**
 * Every entry is built from its `device_type` row: the columns (and its aliases and architecture)
 * win over the stored JSON, so the documents can never disagree with /v6/device_type.
 */
function entryOf(row: Row): CatalogueEntry {
  const { logoUrl: _stored, ...members } = row.catalogue;
  return {
    ...members,
    slug: row.slug,
    aliases: row.aliases.map((alias) => alias.is_referenced_by__alias),
    name: row.name,
    arch: row.arch,
    state: row.state,
    private: row.is_private,
    ...(row.logo === null ? {} : { logoUrl: row.logo }),
  } as CatalogueEntry;
}

/** `slug eq 'x' or device_type_alias/any(a: a/is_referenced_by__alias eq 'x')` */
function named(slug: string): Expr {
  const text = { kind: "text", value: slug } as const;
  return {
    kind: "logical",
    op: "or",
    operands: [
      { kind: "comparison", op: "eq", left: { kind: "path", segments: ["slug"] }, right: text },
      {
        kind: "path",
        segments: ["device_type_alias"],
        end: {
          kind: "lambda",
          quantifier: "any",
          variable: "a",
          body: {
            kind: "comparison",
            op: "eq",
            left: { kind: "path", segments: ["a", "is_referenced_by__alias"] },
            right: text,
          },
        },
      },
    ],
  };
}

/**
 * The entries the caller may read, in the order they were added; with `slug`, only the one it names
 * (by slug or alias). One read plan: the whole entry is a hidden column, so it is a system read,
 * with the caller's predicate on every table it touches.
 */
export async function readEntries(
  db: Executor,
  model: Model,
  permissions: Permissions,
  slug?: string,
): Promise<CatalogueEntry[]> {
  const rows = await readRows<Row>(
    {
      resource: "device_type",
      count: false,
      options: {
        select: [
          "slug",
          "name",
          "state",
          "is_private",
          "logo",
          "catalogue",
          { path: ["is_of__cpu_architecture", "slug"], as: "arch" },
        ],
        expand: [
          {
            name: "device_type_alias",
            as: "aliases",
            count: false,
            options: { select: ["is_referenced_by__alias"] },
          },
        ],
        ...(slug === undefined ? {} : { filter: named(slug) }),
      },
    },
    { db, model, permissions, format: "v4", system: true },
  );
  return rows.map(entryOf);
}
