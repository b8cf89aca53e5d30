/**
 * WeChat's CDN keeps media encrypted with AES-128-ECB and PKCS#7 padding. Keys travel in two
 * shapes: base64 of the 16 raw bytes, or base64 of their 32-character hex spelling (files,
 * voice, video); `image_item.aeskey` is the hex spelling itself.
 */
import { createCipheriv, createDecipheriv } from "node:crypto";

/** The 16-byte key from a `media.aes_key` value (either base64 shape). */
export function parseAesKey(base64Key: string): Buffer {
  const decoded = Buffer.from(base64Key, "base64");
  if (decoded.length === 16) return decoded;
  const text = decoded.toString("latin1");
  if (decoded.length === 32 && /^[0-9a-fA-F]{32}$/.test(text)) return Buffer.from(text, "hex");
  throw new Error(`aes_key must decode to 16 bytes or 32 hex characters (got ${decoded.length} bytes)`);
}

export function encryptAesEcb(data: Uint8Array, key: Buffer): Buffer {
  const cipher = createCipheriv("aes-128-ecb", key, null);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

/** Decrypts; padding that is not valid PKCS#7 is left in place (some media are stored unpadded). */
export function decryptAesEcb(data: Uint8Array, key: Buffer): Buffer {
  if (data.length === 0 || data.length % 16 !== 0) throw new Error(`encrypted media is ${data.length} bytes, not a multiple of 16`);
  const decipher = createDecipheriv("aes-128-ecb", key, null);
  decipher.setAutoPadding(false);
  const plain = Buffer.concat([decipher.update(data), decipher.final()]);
  const pad = plain[plain.length - 1]!;
  if (pad < 1 || pad > 16 || !plain.subarray(plain.length - pad).every((b) => b === pad)) return plain;
  return plain.subarray(0, plain.length - pad);
}

/** The size of `rawSize` bytes once padded (PKCS#7 always adds at least one byte). */
export function paddedSize(rawSize: number): number {
  return Math.ceil((rawSize + 1) / 16) * 16;
}
