import { runChannelKit } from "./channel-kit.js";
import { mattermostPlatform } from "./mattermost-platform.js";

runChannelKit(mattermostPlatform);
