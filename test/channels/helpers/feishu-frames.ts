/**
 * The wire pieces of Feishu's long connection, for the fake platform: `pbbp2.Frame` (the
 * protobuf message every WebSocket frame carries: SeqID, LogID, service, method — 0 control,
 * 1 data — headers, payload) encoded and decoded by hand from its schema, and the AES
 * encryption Feishu applies to events when the app has an Encrypt Key.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";

export interface Frame {
  SeqID: number;
  LogID: number;
  service: number;
  method: number;
  headers: Array<{ key: string; value: string }>;
  payload?: Uint8Array;
}

function varint(n: number): number[] {
  const out: number[] = [];
  let v = BigInt(n);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

function field(no: number, wire: number): number[] {
  return varint((no << 3) | wire);
}

function bytesField(no: number, data: Uint8Array): number[] {
  return [...field(no, 2), ...varint(data.length), ...data];
}

export function encodeFrame(frame: Frame): Uint8Array {
  const enc = new TextEncoder();
  const out: number[] = [...field(1, 0), ...varint(frame.SeqID), ...field(2, 0), ...varint(frame.LogID), ...field(3, 0), ...varint(frame.service), ...field(4, 0), ...varint(frame.method)];
  for (const h of frame.headers) out.push(...bytesField(5, new Uint8Array([...bytesField(1, enc.encode(h.key)), ...bytesField(2, enc.encode(h.value))])));
  if (frame.payload) out.push(...bytesField(8, frame.payload));
  return new Uint8Array(out);
}

function readFields(buf: Uint8Array): Array<{ no: number; value: number | Uint8Array }> {
  const out: Array<{ no: number; value: number | Uint8Array }> = [];
  let pos = 0;
  const readVarint = (): number => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return Number(result);
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const tag = readVarint();
    const wire = tag & 7;
    const no = tag >>> 3;
    if (wire === 0) out.push({ no, value: readVarint() });
    else if (wire === 2) {
      const len = readVarint();
      out.push({ no, value: buf.subarray(pos, pos + len) });
      pos += len;
    } else throw new Error(`unexpected protobuf wire type ${wire}`);
  }
  return out;
}

export function decodeFrame(buf: Uint8Array): Frame {
  const dec = new TextDecoder();
  const frame: Frame = { SeqID: 0, LogID: 0, service: 0, method: 0, headers: [] };
  for (const { no, value } of readFields(buf)) {
    if (no === 1) frame.SeqID = value as number;
    else if (no === 2) frame.LogID = value as number;
    else if (no === 3) frame.service = value as number;
    else if (no === 4) frame.method = value as number;
    else if (no === 5) {
      const h = { key: "", value: "" };
      for (const f of readFields(value as Uint8Array)) {
        if (f.no === 1) h.key = dec.decode(f.value as Uint8Array);
        if (f.no === 2) h.value = dec.decode(f.value as Uint8Array);
      }
      frame.headers.push(h);
    } else if (no === 8) frame.payload = value as Uint8Array;
  }
  return frame;
}

/** Feishu's event encryption: AES-256-CBC, key = SHA-256(Encrypt Key), IV in front, base64. */
export function encryptEvent(key: string, plain: string): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-cbc", createHash("sha256").update(key).digest(), iv);
  return Buffer.concat([iv, cipher.update(plain, "utf8"), cipher.final()]).toString("base64");
}
