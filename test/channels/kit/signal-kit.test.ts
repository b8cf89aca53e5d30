import { runChannelKit } from "./channel-kit.js";
import { signalPlatform } from "./signal-platform.js";

runChannelKit(signalPlatform);
