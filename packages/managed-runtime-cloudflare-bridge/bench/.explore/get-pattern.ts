import { startLocalBridge } from "@open-managed-agents/local-container";
import { createBridgeClient } from "../../src/wire/bridge-client.js";

const bridge = await startLocalBridge();
const client = createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey });
const id = await client.create();
const auth = { authorization: `Bearer ${bridge.apiKey}` };
const execRaw = async (mode: "cancel" | "drain") => {
  const response = await fetch(`${bridge.url}/v1/sandbox/${id}/exec`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ argv: ["sh", "-c", "test -f /workspace/p0"] }) });
  const reader = response.body!.getReader();
  let text = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    text += decoder.decode(value);
    if (mode === "cancel" && text.includes("event: exit")) { await reader.cancel(); return; }
  }
};
for await (const event of client.exec(id, { argv: ["sh", "-c", "cd /workspace && for i in 0 1 2 3 4 5 6 7; do head -c 8388608 /dev/urandom > p$i; done"] })) void event;
const parts = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `/workspace/p${i}`);
const get = async (p: string) => { for await (const _ of (await client.readFile(id, p)) as unknown as AsyncIterable<Uint8Array>) { /* drain */ } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const methods: Record<string, () => Promise<void>> = {
  getOnly: async () => { for (const p of parts) await get(p); },
  execCancelGet: async () => { for (const p of parts) { await execRaw("cancel"); await get(p); } },
  execDrainGet: async () => { for (const p of parts) { await execRaw("drain"); await get(p); } },
  execCancelSleepGet: async () => { for (const p of parts) { await execRaw("cancel"); await sleep(300); await get(p); } },
  clientExecGet: async () => { for (const p of parts) { for await (const e of client.exec(id, { argv: ["test", "-f", p] })) void e; await get(p); } },
};
for (let round = 0; round < 3; round++) {
  for (const [name, run] of Object.entries(methods)) {
    const t = performance.now();
    await run();
    const ms = performance.now() - t - (name === "execCancelSleepGet" ? 300 * parts.length : 0);
    console.log(`round ${round} ${name.padEnd(20)} ${ms.toFixed(0).padStart(6)} ms  ${((parts.length * 8388608) / 1e6 / (ms / 1000)).toFixed(1)} MB/s`);
  }
}
await client.destroy(id);
await bridge.stop();
