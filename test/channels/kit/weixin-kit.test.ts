import { runChannelKit } from "./channel-kit.js";
import { weixinPlatform } from "./weixin-platform.js";

runChannelKit(weixinPlatform);
