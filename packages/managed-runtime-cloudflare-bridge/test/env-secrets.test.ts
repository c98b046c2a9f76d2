import { createHash, randomBytes } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeSandboxProvider } from "../src/runtime/bridge-provider.js";
import { createBridgeClient } from "../src/wire/bridge-client.js";
import { createBridgeCheckpointer } from "../src/checkpoint/bridge-checkpointer.js";

// Cloudflare's own bridge Worker in local workerd, over the local container runtime: container commands
// are host processes, so /proc on the host shows every command line a `ps` inside the sandbox would.
let bridge: LocalBridge;
beforeAll(async () => {
  bridge = await startLocalBridge();
}, 120_000);
afterAll(() => bridge?.stop());

async function commandLines(): Promise<string[]> {
  const lines: string[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const bytes = await readFile(`/proc/${entry}/cmdline`).catch(() => null);
    if (bytes && bytes.length > 0) lines.push(bytes.toString("utf8").replaceAll("\0", " "));
  }
  return lines;
}

function runtimeProvider(fetchImpl?: typeof fetch) {
  const client = createBridgeClient({
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  const checkpointer = createBridgeCheckpointer({
    provider: "cloudflare-bridge",
    client,
    store: null as never,
    keyPrefix: "unused",
    excludes: [],
    maxRequestBytes: 1 << 20,
    partBytes: 1 << 18,
    archiveLimits: { maxEntries: 10_000, maxBytes: 1 << 24, maxEntryBytes: 1 << 24 },
  });
  return createBridgeSandboxProvider({
    provider: "cloudflare-bridge",
    client,
    checkpointer,
    maxRequestBytes: 1 << 20,
    maxExecOutputBytes: 1 << 20,
  });
}

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

describe("harness env on the bridge", () => {
  it("reaches the process through an env file, never its command line, and the file is gone once read", async () => {
    const secret = `secret-${randomBytes(16).toString("hex")}`;
    const quoted = `it's "quoted" $HOME \`x\` \\ ${secret}`;
    const runtime = await runtimeProvider().create({
      sessionId: "env-secrets",
      workdir: "/workspace",
    });
    try {
      const child = await runtime.spawnDuplexProcess({
        command: "sh",
        args: [
          "-c",
          'printf "%s\\n%s\\n" "$(printf %s "$OMA_TEST_SECRET" | sha256sum)" "$(printf %s "$OMA_TEST_QUOTED" | sha256sum)"; ls -a /tmp; sleep 3',
        ],
        env: { OMA_TEST_SECRET: secret, OMA_TEST_QUOTED: quoted },
      });
      let sawProcess = false;
      const deadline = Date.now() + 30_000;
      let stdout = "";
      const reader = child.stdout.getReader();
      const reading = (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          stdout += new TextDecoder().decode(value);
        }
      })();
      // Sample every command line on the machine while the harness runs.
      while (
        !(await Promise.race([
          child.exited.then(() => true),
          new Promise<false>((resolve) => setTimeout(() => resolve(false), 100)),
        ])) &&
        Date.now() < deadline
      ) {
        const lines = await commandLines();
        if (lines.some((line) => line.includes("sleep 3"))) sawProcess = true;
        expect(lines.filter((line) => line.includes(secret))).toEqual([]);
      }
      await reading;
      expect(sawProcess).toBe(true);
      expect((await child.exited).code).toBe(0);
      expect(stdout).toContain(sha256(secret));
      expect(stdout).toContain(sha256(quoted));
      expect(stdout).not.toContain(".oma-env-");
      const exec = await runtime.exec('printf %s "$OMA_TEST_SECRET" | sha256sum; ls -a /tmp', {
        env: { OMA_TEST_SECRET: secret },
      });
      expect(exec.stdout).toContain(sha256(secret));
      expect(exec.stdout).not.toContain(".oma-env-");
    } finally {
      await runtime.destroy();
    }
  }, 60_000);

  it("sends nothing to the sandbox after a command that read its env file ends, and removes the file of one that never started", async () => {
    const requests: string[] = [];
    let refuseLauncher = false;
    const recording: typeof fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const body = typeof init?.body === "string" ? init.body : "";
      requests.push(`${init?.method ?? "GET"} ${url.pathname} ${body.slice(0, 300)}`);
      // The launcher's exec fails before it reaches the sandbox: the command never starts.
      if (refuseLauncher && body.includes("set -a;"))
        return Response.json({ error: "injected", code: "internal_error" }, { status: 500 });
      return fetch(input, init);
    };
    const runtime = await runtimeProvider(recording).create({
      sessionId: "env-file-cleanup",
      workdir: "/workspace",
    });
    try {
      const child = await runtime.spawnDuplexProcess({
        command: "sh",
        args: ["-c", "exit 3"],
        env: { OMA_TEST_SECRET: "spawned" },
      });
      expect((await child.exited).code).toBe(3);
      const afterExit = requests.length;
      // A call sent as the process ends would meet the host's delete of the sandbox.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(requests.slice(afterExit)).toEqual([]);

      const beforeExec = requests.length;
      expect((await runtime.exec("exit 4", { env: { OMA_TEST_SECRET: "exec" } })).exitCode).toBe(4);
      expect(
        requests.slice(beforeExec).filter((request) => request.includes("rm -f '/tmp/.oma-env-")),
      ).toEqual([]);

      refuseLauncher = true;
      await expect(
        runtime.exec("true", { env: { OMA_TEST_SECRET: "never-started" } }),
      ).rejects.toThrow();
      refuseLauncher = false;
      const listing = await runtime.exec("ls -a /tmp");
      expect(listing.exitCode).toBe(0);
      expect(listing.stdout).not.toContain(".oma-env-");
    } finally {
      await runtime.destroy();
    }
  });

  it("holds a killed process's exit back until the kill's call answered, and sends nothing for a kill after the exit", async () => {
    const events: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const body = typeof init?.body === "string" ? init.body : "";
      const response = await fetch(input, init);
      if (!body.includes("kill -s")) return response;
      // The kill runs in the sandbox at once; its answer reaches the driver later, as on a slow link.
      events.push("kill sent");
      await new Promise((resolve) => setTimeout(resolve, 500));
      events.push("kill answered");
      return response;
    };
    const runtime = await runtimeProvider(recording).create({
      sessionId: "process-kill",
      workdir: "/workspace",
    });
    try {
      const child = await runtime.spawnDuplexProcess({ command: "sleep", args: ["30"] });
      await new Promise((resolve) => setTimeout(resolve, 300));
      child.kill("SIGTERM");
      const exit = await child.exited;
      events.push("exited");
      expect(exit.code === 143 || exit.signal === "SIGTERM").toBe(true);
      expect(events).toEqual(["kill sent", "kill answered", "exited"]);

      const ended = await runtime.spawnDuplexProcess({ command: "true" });
      expect((await ended.exited).code).toBe(0);
      const before = events.length;
      ended.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(events.slice(before)).toEqual([]);
    } finally {
      await runtime.destroy();
    }
  });
});
