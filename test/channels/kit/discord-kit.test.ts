import { runChannelKit } from "./channel-kit.js";
import { discordPlatform } from "./discord-platform.js";

runChannelKit(discordPlatform);
