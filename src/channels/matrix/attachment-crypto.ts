/**
 * Attachments in encrypted rooms (client-server spec, "Sending encrypted attachments"): the
 * file is encrypted with AES-256-CTR under a fresh key before upload, and the room event
 * carries a `file` object — the `mxc://` URI, the key as a JWK, the IV and the SHA-256 of
 * the ciphertext — inside the (itself encrypted) message. The homeserver only stores ciphertext.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/** The spec's `EncryptedFile`. */
export interface EncryptedFile {
  url: string;
  key: { kty: "oct"; key_ops: string[]; alg: "A256CTR"; k: string; ext: true };
  iv: string;
  hashes: { sha256: string };
  v: "v2";
}

/** Unpadded standard base64, as Matrix writes it. */
function unpadded(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64").replace(/=+$/, "");
}

/** Encrypts `data`; the `file` object lacks only the URL the ciphertext gets on upload. */
export function encryptAttachment(data: Uint8Array): { ciphertext: Buffer; file: Omit<EncryptedFile, "url"> } {
  const key = randomBytes(32);
  // The low 64 bits are the block counter: zero, so a file of any size never wraps it.
  const iv = Buffer.concat([randomBytes(8), Buffer.alloc(8)]);
  const cipher = createCipheriv("aes-256-ctr", key, iv);
  const ciphertext = Buffer.concat([cipher.update(data), cipher.final()]);
  return {
    ciphertext,
    file: {
      key: { kty: "oct", key_ops: ["encrypt", "decrypt"], alg: "A256CTR", k: key.toString("base64url"), ext: true },
      iv: unpadded(iv),
      hashes: { sha256: unpadded(createHash("sha256").update(ciphertext).digest()) },
      v: "v2",
    },
  };
}

/** Whether `value` looks like an `EncryptedFile` this module can decrypt. */
export function isEncryptedFile(value: unknown): value is EncryptedFile {
  if (typeof value !== "object" || value === null) return false;
  const f = value as Partial<EncryptedFile>;
  return typeof f.url === "string" && typeof f.iv === "string" && typeof f.key?.k === "string" && typeof f.hashes?.sha256 === "string";
}

/** The plaintext of a downloaded attachment; throws when the hash or the key does not match. */
export function decryptAttachment(ciphertext: Uint8Array, file: EncryptedFile): Buffer {
  const digest = unpadded(createHash("sha256").update(ciphertext).digest());
  if (digest !== file.hashes.sha256.replace(/=+$/, "")) throw new Error("encrypted attachment: the SHA-256 of the download does not match");
  const key = Buffer.from(file.key.k, "base64url");
  const iv = Buffer.from(file.iv, "base64");
  if (key.length !== 32 || iv.length !== 16) throw new Error("encrypted attachment: malformed key or iv");
  const decipher = createDecipheriv("aes-256-ctr", key, iv);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}
