import { runChannelKit } from "./channel-kit.js";
import { slackPlatform } from "./slack-platform.js";

runChannelKit(slackPlatform);
