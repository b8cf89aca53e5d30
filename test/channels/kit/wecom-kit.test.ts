import { runChannelKit } from "./channel-kit.js";
import { wecomPlatform } from "./wecom-platform.js";

runChannelKit(wecomPlatform);
