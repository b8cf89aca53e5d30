/**
 * The Python nanobot's group context: the last `groupMessageBufferSize` messages of each group
 * (whoever they addressed), handed to the agent with the next message that addresses the bot.
 */
interface Buffered {
  name: string;
  text: string;
}

/** Each message is cut to this many characters in the context. */
const CONTEXT_CHARS = 200;

export class GroupContext {
  private readonly groups = new Map<string, Buffered[]>();

  constructor(private readonly size: number) {}

  add(groupId: string, name: string, text: string): void {
    const list = this.groups.get(groupId) ?? [];
    list.push({ name, text });
    while (list.length > this.size) list.shift();
    this.groups.set(groupId, list);
  }

  /** The buffered messages before the latest one, one `name: text` line each. */
  context(groupId: string): string {
    const list = this.groups.get(groupId) ?? [];
    return list
      .slice(0, -1)
      .map((m) => `${m.name}: ${m.text.slice(0, CONTEXT_CHARS)}`)
      .join("\n");
  }
}
