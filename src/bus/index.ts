export { InProcessBus } from "./in-process-bus.js";
export type {
  BusError,
  InboundMessage,
  MediaItem,
  MessageBus,
  OutboundFilter,
  OutboundKind,
  OutboundMessage,
} from "./types.js";
