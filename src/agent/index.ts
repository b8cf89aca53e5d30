export { Runtime, FALLBACK_MODELS, NO_PROVIDER_HELP } from "./runtime.js";
export type { AgentProfile, RuntimeOptions } from "./runtime.js";
export { runSessionTurn } from "./session-turn.js";
export type { SessionTurnInput, SessionTurnResult } from "./session-turn.js";
export { DirectTurnProcessor } from "./turn-processor.js";
export type { TurnOptions, TurnProcessor, TurnReply, TurnRequest } from "./turn-processor.js";
export { buildDefaultInstructions } from "./default-instructions.js";
