/** The channel kit with the users' direct chats end-to-end encrypted (see `matrix-e2ee-platform.ts`). */
import { vi } from "vitest";
import { runChannelKit } from "./channel-kit.js";
import { matrixEncryptedPlatform } from "./matrix-e2ee-platform.js";

// Three Rust crypto machines (WASM) per test: the first start in a worker is slow on a busy machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

runChannelKit(matrixEncryptedPlatform);
