/**
 * A bounded set that forgets its oldest entries: enough to recognise a delivery id or a
 * platform update seen recently without growing for the life of the process.
 */
export class LruSet {
  private readonly items = new Set<string>();

  constructor(private readonly capacity: number = 10_000) {}

  has(key: string): boolean {
    if (!this.items.has(key)) return false;
    // Refresh recency: a Set iterates in insertion order.
    this.items.delete(key);
    this.items.add(key);
    return true;
  }

  add(key: string): void {
    this.items.delete(key);
    this.items.add(key);
    while (this.items.size > this.capacity) {
      const oldest = this.items.values().next().value;
      if (oldest === undefined) break;
      this.items.delete(oldest);
    }
  }

  get size(): number {
    return this.items.size;
  }
}
