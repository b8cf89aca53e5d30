/** The channel kit with the users' direct chats end-to-end encrypted (see `matrix-e2ee-platform.ts`). */
import { runChannelKit } from "./channel-kit.js";
import { matrixEncryptedPlatform } from "./matrix-e2ee-platform.js";

runChannelKit(matrixEncryptedPlatform);
