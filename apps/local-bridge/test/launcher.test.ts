import { existsSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { startLocalBridge } from "@open-managed-agents/local-container";
import { beforeAll, describe, expect, it } from "vitest";
import { bridgeClient, decodeOutput } from "./bridge-client.js";

const appBundle = fileURLToPath(new URL("../dist/index.js", import.meta.url));

/** True while a process with this pid runs (a zombie waiting to be reaped counts as gone). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Host pids of the processes in the PID namespace of `namespacePid`, by their pid inside it. */
function processesInNamespaceOf(namespacePid: number): Map<number, number> {
  const namespace = readlinkSync(`/proc/${namespacePid}/ns/pid`);
  const found = new Map<number, number>();
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readlinkSync(`/proc/${entry}/ns/pid`) !== namespace) continue;
      const inner = /^NSpid:.*\s(\d+)$/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1];
      if (inner !== undefined) found.set(Number(inner), Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

beforeAll(async () => {
  // The app's own Worker, bundled by wrangler with its `@cloudflare/containers` alias.
  if (!existsSync(appBundle))
    await promisify(execFile)(
      "pnpm",
      ["exec", "wrangler", "deploy", "--dry-run", "--outdir", "dist"],
      { cwd: fileURLToPath(new URL("..", import.meta.url)) },
    );
}, 120_000);

describe("the app's wrangler-bundled Worker", () => {
  it("runs a command, and stop() leaves no container process and no server behind", async () => {
    const bridge = await startLocalBridge({ workerScriptPath: appBundle });
    const client = bridgeClient(bridge.url, bridge.apiKey);
    const id = await client.create();
    const { frames } = await client.exec(id, ["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"]);
    // The pid is the container's own (its PID namespace); the host knows the process by another.
    const [container] = bridge.containerServer.containers.list();
    const pid =
      processesInNamespaceOf(container?.root?.pid ?? -1).get(
        Number(decodeOutput(frames, "stdout").trim()),
      ) ?? -1;
    expect(isAlive(pid)).toBe(true);
    await bridge.stop();
    expect(isAlive(pid)).toBe(false);
    await expect(fetch(`${bridge.url}/health`)).rejects.toThrow();
    await expect(fetch(`${bridge.containerServer.url}/`)).rejects.toThrow();
  }, 60_000);
});

describe("launcher options", () => {
  it("primes the warm pool so containers are started ahead of use", async () => {
    const bridge = await startLocalBridge({ warmPoolTarget: 1 });
    try {
      const client = bridgeClient(bridge.url, bridge.apiKey);
      let warm = 0;
      for (let attempt = 0; attempt < 200 && warm < 1; attempt += 1) {
        warm = ((await (await client.request("GET", "/v1/pool/stats")).json()) as { warm: number })
          .warm;
        if (warm < 1) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(warm).toBe(1);
      expect(bridge.containerServer.containers.list().length).toBeGreaterThanOrEqual(1);
    } finally {
      await bridge.stop();
    }
  }, 90_000);

  it("serves the bridge over the websocket transport too", async () => {
    const bridge = await startLocalBridge({ transport: "websocket" });
    try {
      const client = bridgeClient(bridge.url, bridge.apiKey);
      const id = await client.create();
      const { frames } = await client.exec(id, ["sh", "-c", "echo via-websocket; exit 4"]);
      expect(decodeOutput(frames, "stdout")).toBe("via-websocket\n");
      expect(JSON.parse(frames.at(-1)?.data ?? "{}")).toEqual({ exit_code: 4 });
      await client.put(id, "workspace/w.txt", "ws file");
      expect(await (await client.get(id, "workspace/w.txt")).text()).toBe("ws file");
    } finally {
      await bridge.stop();
    }
  }, 60_000);

  it("uses the API key it is given", async () => {
    const apiKey = "local-test-key-0123456789";
    const bridge = await startLocalBridge({ apiKey });
    try {
      expect(bridge.apiKey).toBe(apiKey);
      const created = await fetch(`${bridge.url}/v1/sandbox`, {
        method: "POST",
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      expect(created.status).toBe(200);
    } finally {
      await bridge.stop();
    }
  }, 60_000);
});
