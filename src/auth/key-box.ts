import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from "node:crypto";

/**
 * Seals the supervisor API keys devices report, so the database holds them encrypted (AES-256-GCM);
 * the proxy unseals one to present it to its device.
 */
export class KeyBox {
  // A KeyObject, not the key's bytes: given bytes, every cipher makes a KeyObject of them first,
  // which is most of an unseal's cost (18 µs against 4 µs on Node 24; a job unseals one per device).
  private readonly key: KeyObject;

  constructor(secret: string) {
    this.key = createSecretKey(createHash("sha256").update(secret).digest());
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64url");
  }

  unseal(sealed: string): string {
    const bytes = Buffer.from(sealed, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
  }
}

/**
 * A key's SHA-256, hex: how the cloud remembers the supervisor keys a device has retired without
 * keeping them (src/proxy/regenerated-key.ts, src/devices/state.ts).
 */
export function keyFingerprint(plain: string): string {
  return createHash("sha256").update(plain).digest("hex");
}
