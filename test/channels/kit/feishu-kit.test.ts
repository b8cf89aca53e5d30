import { runChannelKit } from "./channel-kit.js";
import { feishuPlatform } from "./feishu-platform.js";

runChannelKit(feishuPlatform);
