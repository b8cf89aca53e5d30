/**
 * Image dimensions from file headers (PNG, JPEG, GIF, WebP), so image token costs can be
 * estimated without an image library. Returns undefined for anything it cannot read.
 */

export interface ImageSize {
  width: number;
  height: number;
}

function pngSize(b: Buffer): ImageSize | undefined {
  // Signature, then the IHDR chunk: width and height are the first two big-endian u32s.
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString("ascii", 12, 16) !== "IHDR") return undefined;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

function jpegSize(b: Buffer): ImageSize | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let offset = 2;
  while (offset + 9 < b.length) {
    if (b[offset] !== 0xff) return undefined;
    const marker = b[offset + 1] ?? 0;
    if (marker === 0xff) {
      offset++; // fill byte
      continue;
    }
    const length = b.readUInt16BE(offset + 2);
    // SOF0..SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: b.readUInt16BE(offset + 5), width: b.readUInt16BE(offset + 7) };
    }
    if (length < 2) return undefined;
    offset += 2 + length;
  }
  return undefined;
}

function gifSize(b: Buffer): ImageSize | undefined {
  if (b.length < 10 || b.toString("ascii", 0, 3) !== "GIF") return undefined;
  return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

function webpSize(b: Buffer): ImageSize | undefined {
  if (b.length < 30 || b.toString("ascii", 0, 4) !== "RIFF" || b.toString("ascii", 8, 12) !== "WEBP") return undefined;
  const chunk = b.toString("ascii", 12, 16);
  if (chunk === "VP8X") return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
  if (chunk === "VP8 ") return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === "VP8L") {
    const bits = b.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  return undefined;
}

/** Reads width and height from the bytes of a PNG, JPEG, GIF or WebP image. */
export function readImageSize(bytes: Buffer): ImageSize | undefined {
  const size = pngSize(bytes) ?? jpegSize(bytes) ?? gifSize(bytes) ?? webpSize(bytes);
  return size && size.width > 0 && size.height > 0 ? size : undefined;
}

/** Tokens charged for an undecodable image (Go nanobot's rule). */
export const UNKNOWN_IMAGE_TOKENS = 1600;
const MAX_EDGE = 1568;

/** Tokens for an image: scaled so the long edge is ≤ 1568 px, then width·height/750. */
export function imageTokens(size: ImageSize | undefined): number {
  if (!size) return UNKNOWN_IMAGE_TOKENS;
  let { width, height } = size;
  const longEdge = Math.max(width, height);
  if (longEdge > MAX_EDGE) {
    const scale = MAX_EDGE / longEdge;
    width = Math.round(width * scale);
    height = Math.round(height * scale);
  }
  return Math.ceil((width * height) / 750);
}

/** Decodes base64 (or a `data:` URL) and reads its size; undefined when not an inline image. */
export function inlineImageSize(data: string | undefined, url: string | undefined): ImageSize | undefined {
  let base64 = data;
  if (!base64 && url?.startsWith("data:")) {
    const comma = url.indexOf(",");
    base64 = comma >= 0 ? url.slice(comma + 1) : undefined;
  }
  if (!base64) return undefined;
  try {
    return readImageSize(Buffer.from(base64, "base64"));
  } catch {
    return undefined;
  }
}
