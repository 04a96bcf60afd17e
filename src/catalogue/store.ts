import type { Prisma } from "../generated/prisma/client.ts";
import type { CatalogueEntry } from "./entry.ts";

/** Writes catalogue entries into `device_type` (columns and the whole entry) and their aliases. */
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
      logo: typeof entry.logoUrl === "string" ? entry.logoUrl : null,
      catalogue: entry as Prisma.InputJsonValue,
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
