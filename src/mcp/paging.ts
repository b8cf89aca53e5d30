/** Follows `nextCursor` through a paginated MCP list call. */
export async function listAll<R extends { nextCursor?: string }, T>(
  page: (cursor: string | undefined) => Promise<R>,
  items: (result: R) => T[],
  maxPages = 100,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const result = await page(cursor);
    all.push(...items(result));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return all;
}
