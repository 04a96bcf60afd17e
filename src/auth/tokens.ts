import { errors, jwtVerify, SignJWT } from "jose";

/** What a session token says: the user, their session generation, and when they last gave their password. */
export interface SessionClaims {
  readonly id: number;
  /** The user's jwt_secret when the token was made; a password change rotates it, ending every session. */
  readonly jwt_secret: string;
  /** Seconds since the epoch of the login that started this chain of tokens. */
  readonly authTime: number;
}

const lifetime = "7d";

export function issueToken(secret: Uint8Array, claims: SessionClaims): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setExpirationTime(lifetime)
    .sign(secret);
}

export function looksLikeJwt(credential: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(credential);
}

export async function verifyToken(secret: Uint8Array, token: string): Promise<SessionClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: ["HS256"] });
    const { id, jwt_secret, authTime } = payload as Record<string, unknown>;
    if (typeof id !== "number" || typeof jwt_secret !== "string" || typeof authTime !== "number")
      return undefined;
    return { id, jwt_secret, authTime };
  } catch (error) {
    if (error instanceof errors.JOSEError) return undefined;
    throw error;
  }
}
