import type { Prisma } from "../generated/prisma/client.ts";
import type { CatalogueEntry } from "./schema.ts";

/**
 * Writes catalogue entries into `device_type` (columns and the whole entry) and their aliases. The
 * documents are built back from these rows (read.ts), so the columns and the documents agree.
 * System write: an operator's import (the CLI, the first start), validated whole by the catalogue's
 * schema; the entry is a hidden column no API writes.
 */
export async function saveEntries(
  tx: Prisma.TransactionClient,
  entries: readonly CatalogueEntry[],
): Promise<void> {
  for (const entry of entries) {
    const columns = {
      name: entry.name,
      CpuArchitecture: { connectOrCreate: { where: { slug: entry.arch }, create: { slug: entry.arch } } },
      state: entry.state,
      is_private: entry.private ?? false,
      logo: entry.logoUrl ?? null,
      catalogue: entry satisfies Prisma.InputJsonValue,
    };
    const saved = await tx.deviceType.upsert({
      where: { slug: entry.slug },
      create: { slug: entry.slug, ...columns },
      update: columns,
    });
    await tx.deviceTypeAlias.deleteMany({ where: { device_type: saved.id } });
    await tx.deviceTypeAlias.createMany({
      data: [...new Set([entry.slug, ...entry.aliases])].map((alias) => ({
        device_type: saved.id,
        is_referenced_by__alias: alias,
      })),
    });
  }
}
