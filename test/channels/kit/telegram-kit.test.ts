import { runChannelKit } from "./channel-kit.js";
import { telegramPlatform } from "./telegram-platform.js";

runChannelKit(telegramPlatform);
