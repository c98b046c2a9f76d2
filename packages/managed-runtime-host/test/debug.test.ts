import { createHash } from "node:crypto";
import { it, vi } from "vitest";
import { runChaosSeed } from "./support/chaos-world.js";
it("debug", async () => {
  vi.spyOn(crypto.subtle, "digest").mockImplementation(async (_a, data) => { const d = createHash("sha256").update(new Uint8Array(data as ArrayBuffer)).digest(); return d.buffer.slice(d.byteOffset, d.byteOffset + d.byteLength); });
  for (const seed of [2]) console.log(seed, await runChaosSeed(seed, true));
});
