import { createHash } from "node:crypto";
import type { SnapshotSandbox } from "./sandbox-port.js";

/**
 * Sends `source` into the sandbox folder `dir` as receive.sh reads it: parts of `partBytes`, each followed by its
 * sha256 marker once written, then `end` with the count. Returns the bytes sent. One part's buffer is filled
 * and sent again and again: a send holds `partBytes` whatever the size of what it sends.
 */
export async function sendParts(
  sandbox: SnapshotSandbox,
  dir: string,
  source: AsyncIterable<Uint8Array>,
  partBytes: number,
  signal?: AbortSignal,
): Promise<number> {
  let index = 0;
  let sent = 0;
  let part: Buffer | null = null;
  let filled = 0;
  const flush = async () => {
    if (!part || filled === 0) return;
    const bytes = part.subarray(0, filled);
    const name = `${dir}/part-${String(index).padStart(6, "0")}`;
    const marker = Buffer.from(createHash("sha256").update(bytes).digest("hex"));
    // The write is answered once its body was read whole: the buffer is free to fill again after it.
    await sandbox.writeFile(name, bytes, signal);
    await sandbox.writeFile(`${name}.sha256`, marker, signal);
    index += 1;
    sent += filled;
    filled = 0;
  };
  for await (const chunk of source) {
    for (let at = 0; at < chunk.length; ) {
      part ??= Buffer.allocUnsafe(partBytes);
      const take = Math.min(chunk.length - at, partBytes - filled);
      part.set(chunk.subarray(at, at + take), filled);
      filled += take;
      at += take;
      if (filled === partBytes) await flush();
    }
  }
  await flush();
  await sandbox.writeFile(`${dir}/end`, Buffer.from(String(index)), signal);
  return sent;
}
