/**
 * Server-issued WebSocket client ids. Every holder of the channel token is the same principal
 * to the token check, so the client id is what tells clients apart: the server issues it
 * (random), signs it with an HMAC of a secret kept in the nanobot home, and hands the client
 * `<id>.<signature>`. A client resumes by presenting that value; one it made up, or one
 * with a signature from another server or channel, is refused. The `<id>` part alone is the
 * client's public name (sender id, session key): knowing it does not let anyone resume.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

const ID_BYTES = 16;
const SECRET_BYTES = 32;
/** `<22 base64url chars>.<43 base64url chars>`: 128 random bits, then a full SHA-256 HMAC. */
const CREDENTIAL = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export interface IssuedClient {
  /** The public id: sender id and session scope. */
  id: string;
  /** What the client keeps and presents to resume (`?clientId=`). */
  credential: string;
}

export function clientSecretPath(home: string, channel: string): string {
  return join(home, "channels", channel, "client-secret");
}

export class ClientIdIssuer {
  private constructor(
    private readonly secret: Buffer,
    private readonly channel: string,
  ) {}

  /**
   * Reads the channel's secret, creating it (0600) on first use. A secret that cannot be read
   * or written fails the channel's start: without it, issued ids would not survive a restart.
   */
  static async open(home: string, channel: string): Promise<ClientIdIssuer> {
    const path = clientSecretPath(home, channel);
    return new ClientIdIssuer(await readOrCreateSecret(path), channel);
  }

  issue(): IssuedClient {
    const id = randomBytes(ID_BYTES).toString("base64url");
    return { id, credential: `${id}.${this.sign(id)}` };
  }

  /** The public id of a credential this channel issued; undefined for anything else. */
  verify(credential: string): string | undefined {
    const match = CREDENTIAL.exec(credential);
    if (!match) return undefined;
    const [, id, signature] = match as unknown as [string, string, string];
    const expected = Buffer.from(this.sign(id));
    const presented = Buffer.from(signature);
    return presented.length === expected.length && timingSafeEqual(presented, expected) ? id : undefined;
  }

  private sign(id: string): string {
    // The channel name is signed too: an id issued by one WebSocket channel does not open another.
    return createHmac("sha256", this.secret).update(`nanobot-ws-client:${this.channel}:${id}`).digest("base64url");
  }
}

async function readOrCreateSecret(path: string): Promise<Buffer> {
  // Written aside, then linked into place: a second process starting at the same moment either
  // wins the link or reads the whole file the first one linked, never a half-written one.
  const fresh = randomBytes(SECRET_BYTES).toString("hex");
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(temp, `${fresh}\n`, { encoding: "utf8", mode: 0o600 });
    await link(temp, path);
    return Buffer.from(fresh, "hex");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw secretError(path, "could not be created", error);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  let text: string;
  try {
    text = (await readFile(path, "utf8")).trim();
  } catch (error) {
    throw secretError(path, "could not be read", error);
  }
  if (!/^[0-9a-f]{64}$/i.test(text)) {
    throw new Error(`the WebSocket client secret ${path} is damaged (expected 64 hex characters); delete it to create a new one (clients then get new ids)`);
  }
  return Buffer.from(text, "hex");
}

function secretError(path: string, what: string, cause: unknown): Error {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new Error(`the WebSocket client secret ${path} ${what} (${reason}); check that the nanobot home is writable`, { cause });
}
