import { runChannelKit } from "./channel-kit.js";
import { whatsappPlatform } from "./whatsapp-platform.js";

runChannelKit(whatsappPlatform);
