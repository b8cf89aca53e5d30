import { runChannelKit } from "./channel-kit.js";
import { napcatPlatform } from "./napcat-platform.js";

runChannelKit(napcatPlatform);
