import { runChannelKit } from "./channel-kit.js";
import { matrixPlatform } from "./matrix-platform.js";

runChannelKit(matrixPlatform);
