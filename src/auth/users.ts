import { randomBytes } from "node:crypto";
import type { Database } from "../db/database.ts";
import { hashPassword } from "./passwords.ts";

export interface NewUser {
  readonly username: string;
  readonly email: string;
  readonly password: string;
  readonly isAdmin?: boolean;
}

/** A user, their actor, and their personal organization (handle = username) which they own. */
export async function createUser(db: Database, user: NewUser): Promise<{ id: number; organization: number }> {
  const password = await hashPassword(user.password);
  return db.prisma.$transaction(async (tx) => {
    const created = await tx.user.create({
      data: {
        username: user.username,
        email: user.email,
        password,
        jwt_secret: randomBytes(32).toString("base64url"),
        is_admin: user.isAdmin ?? false,
        Actor: { create: {} },
      },
    });
    const organization = await tx.organization.create({
      data: {
        name: user.username,
        handle: user.username,
        Memberships: { create: { user: created.id, role: "owner" } },
      },
    });
    return { id: created.id, organization: organization.id };
  });
}

/**
 * On a database without an admin (a fresh one, or one only seeded with demo users), creates one. Returns the generated password when
 * none was configured, so the caller can print it once.
 */
export async function ensureAdmin(
  db: Database,
  admin: { username: string; password: string | undefined },
): Promise<{ created: false } | { created: true; generatedPassword: string | undefined }> {
  if (await db.prisma.user.findFirst({ where: { is_admin: true }, select: { id: true } }))
    return { created: false };
  const password = admin.password ?? randomBytes(18).toString("base64url");
  await createUser(db, {
    username: admin.username,
    email: `${admin.username}@localhost`,
    password,
    isAdmin: true,
  });
  return { created: true, generatedPassword: admin.password ? undefined : password };
}
