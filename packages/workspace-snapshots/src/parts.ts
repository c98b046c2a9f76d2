import { createHash } from "node:crypto";
import type { SnapshotSandbox } from "./sandbox-port.js";

/**
 * Sends `source` into the sandbox folder `dir` as receive.sh reads it: parts of `partBytes`, each followed by its
 * sha256 marker once written, then `end` with the count. Returns the bytes sent.
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
  let held: Buffer[] = [];
  let heldBytes = 0;
  const flush = async (bytes: Buffer) => {
    const name = `${dir}/part-${String(index).padStart(6, "0")}`;
    await sandbox.writeFile(name, bytes, signal);
    await sandbox.writeFile(`${name}.sha256`, Buffer.from(createHash("sha256").update(bytes).digest("hex")), signal);
    index += 1;
    sent += bytes.length;
  };
  for await (const chunk of source) {
    held.push(Buffer.from(chunk));
    heldBytes += chunk.length;
    while (heldBytes >= partBytes) {
      const all = Buffer.concat(held);
      await flush(all.subarray(0, partBytes));
      held = [all.subarray(partBytes)];
      heldBytes = all.length - partBytes;
    }
  }
  if (heldBytes > 0) await flush(Buffer.concat(held));
  await sandbox.writeFile(`${dir}/end`, Buffer.from(String(index)), signal);
  return sent;
}
