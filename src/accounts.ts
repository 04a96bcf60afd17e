import { randomBytes } from "node:crypto";
import { adminPermissions } from "./auth/permissions.ts";
import { createEntity, type WriteContext } from "./core/write/write.ts";
import type { Database, Executor } from "./db/database.ts";
import { withinTransaction } from "./db/within-transaction.ts";
import type { Model } from "./model/types.ts";

// Users and organizations made from the shell go through the same write core as POST /v6/user, so
// they get the same validation and rules (hashed password, personal organization).

function adminContext(db: Database, model: Model): WriteContext {
  return { db, model, permissions: adminPermissions, actor: undefined };
}

export interface NewUser {
  readonly username: string;
  readonly email: string;
  readonly password: string;
  readonly isAdmin?: boolean;
}

export async function createUser(db: Database, model: Model, user: NewUser): Promise<number> {
  const { isAdmin, ...fields } = user;
  const id = await createEntity("user", fields, adminContext(db, model));
  // System write: admin rights are given from the shell or at first start only, never through the API.
  if (isAdmin)
    await db.query({ text: `UPDATE "user" SET "is_admin" = true WHERE "id" = $1::int4`, values: [id] });
  return id;
}

export interface NewOrganization {
  readonly handle: string;
  readonly name: string;
  /** Username of its first owner. */
  readonly owner?: string | undefined;
}

export async function createOrganization(
  db: Database,
  model: Model,
  organization: NewOrganization,
): Promise<number> {
  const context = adminContext(db, model);
  const id = await createEntity(
    "organization",
    { handle: organization.handle, name: organization.name },
    context,
  );
  if (organization.owner) {
    const [owner] = await db.query<{ id: number }>({
      text: `SELECT "id" FROM "user" WHERE lower("username") = lower($1::text)`,
      values: [organization.owner],
    });
    if (!owner) throw new Error(`No user '${organization.owner}'`);
    await createEntity(
      "organization_membership",
      { user: owner.id, is_member_of__organization: id, role: "owner" },
      context,
    );
  }
  return id;
}

// Instances started together on a fresh database: the first to take this lock creates the admin,
// the others wait and then find it. Its own key (migrate.ts holds Prisma's, 72707369).
const FIRST_ADMIN_LOCK = 72707371;

async function hasAdmin(db: Executor): Promise<boolean> {
  const [admin] = await db.query({ text: `SELECT 1 FROM "user" WHERE "is_admin" LIMIT 1`, values: [] });
  return admin !== undefined;
}

/**
 * On a database without an admin (a fresh one, or one only seeded with demo users), creates one.
 * Returns the generated password when none was configured, so the caller can print it once.
 */
export async function ensureAdmin(
  db: Database,
  model: Model,
  admin: { username: string; password: string | undefined },
): Promise<{ created: false } | { created: true; generatedPassword: string | undefined }> {
  // Every start after the first: one statement, no lock.
  if (await hasAdmin(db)) return { created: false };
  const password = admin.password ?? randomBytes(18).toString("base64url");
  return db.transaction(async (tx) => {
    await tx.query({ text: "SELECT pg_advisory_xact_lock($1::int8)", values: [FIRST_ADMIN_LOCK] });
    if (await hasAdmin(tx)) return { created: false };
    // In this transaction: the user and its admin flag commit together, so neither a crash nor
    // another instance can see the user without the flag.
    await createUser(withinTransaction(db, tx), model, {
      username: admin.username,
      email: `${admin.username}@localhost`,
      password,
      isAdmin: true,
    });
    return { created: true, generatedPassword: admin.password ? undefined : password };
  });
}
