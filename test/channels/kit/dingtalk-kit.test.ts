import { runChannelKit } from "./channel-kit.js";
import { dingtalkPlatform } from "./dingtalk-platform.js";

runChannelKit(dingtalkPlatform);
