import { runChannelKit } from "./channel-kit.js";
import { msteamsPlatform } from "./msteams-platform.js";

runChannelKit(msteamsPlatform);
