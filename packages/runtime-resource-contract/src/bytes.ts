/**
 * Joins byte chunks into one array; a single chunk comes back as it is, without a copy. The NDJSON
 * reader joins line fragments with it, and `@open-managed-agents/runtime-utils` re-exports it.
 */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const total = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  const result = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    result.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return result;
}
