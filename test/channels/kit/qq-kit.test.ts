import { runChannelKit } from "./channel-kit.js";
import { qqPlatform } from "./qq-platform.js";

runChannelKit(qqPlatform);
