/**
 * Runs the real `@cloudflare/sandbox` 0.12.10 (the Sandbox Durable Object, `getSandbox` and `SandboxClient`)
 * in local workerd through Miniflare, with `@cloudflare/containers` replaced by the shim and the container
 * control API answered by the local container server. The SDK cannot be imported in plain Node.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Plugin, build } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, startTestServer, waitFor } from "./helpers.js";

const shimSource = fileURLToPath(new URL("../src/shim/containers-shim.ts", import.meta.url));

/** Aliases `@cloudflare/containers` to the shim source; the shim itself still imports the real package. */
const containersShim: Plugin = {
  name: "containers-shim",
  setup(builder) {
    builder.onResolve({ filter: /^@cloudflare\/containers$/ }, (args) => (args.importer === shimSource ? undefined : { path: shimSource }));
  },
};

let harness: TestServer;
let miniflare: Miniflare;
let bundleDir: string;

beforeAll(async () => {
  harness = await startTestServer();
  bundleDir = await mkdtemp(join(tmpdir(), "oma-sdk-worker-"));
  await build({
    entryPoints: [fileURLToPath(new URL("./fixtures/sdk-worker.ts", import.meta.url))],
    outfile: join(bundleDir, "worker.js"),
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser", "import"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    plugins: [containersShim],
    logLevel: "error",
  });
  miniflare = new Miniflare({
    modules: true,
    scriptPath: join(bundleDir, "worker.js"),
    modulesRoot: bundleDir,
    compatibilityDate: "2026-04-01",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: { Sandbox: { className: "Sandbox", useSQLite: true } },
    bindings: { OMA_LOCAL_CONTAINER_URL: harness.server.url },
    cf: false,
    log: new Log(LogLevel.WARN),
  });
  await miniflare.ready;
}, 60_000);

afterAll(async () => {
  await miniflare?.dispose();
  await harness?.stop();
  await rm(bundleDir, { recursive: true, force: true });
});

async function run(scenario: string, name = scenario): Promise<Record<string, unknown>> {
  const response = await miniflare.dispatchFetch(`http://sdk.local/${scenario}?name=${name}`);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.error, String(body.error)).toBeUndefined();
  return body;
}

describe("the Sandbox SDK in workerd over the local container server", () => {
  it("getSandbox(env.Sandbox, name).exec('echo hi') works end to end", async () => {
    expect(await run("exec")).toEqual({ stdout: "hi", exitCode: 0, success: true });
    // The Durable Object started exactly one local container for the name.
    expect(harness.server.containers.list()).toHaveLength(1);
  });

  it("file operations, including the SDK's FileNotFoundError", async () => {
    expect(await run("files")).toEqual({
      content: "alpha", exists: true, names: ["b.txt"], gone: false, missing: "FileNotFoundError: File not found: /workspace/none.txt",
    });
  });

  it("setEnvVars reaches the default session and createSession applies its cwd and env", async () => {
    expect(await run("env")).toEqual({ fromDefault: "alpha", fromSession: "/tmp\nbeta" });
  });

  it("streams output through onOutput and execStream", async () => {
    const body = await run("stream");
    expect(body.chunks).toEqual(["stdout:one\n", "stderr:two\n"]);
    expect(body.exitCode).toBe(0);
    expect(body.events).toEqual(["start:", "stdout:three\n", "complete:4"]);
  });

  it("starts, lists, reads and kills a background process", async () => {
    expect(await run("process")).toEqual({ listed: true, stdout: "started\n" });
  });

  it("destroy() wipes the container on the server", async () => {
    const before = harness.server.containers.list().length;
    await run("destroy");
    expect(await waitFor(() => harness.server.containers.list().length === before)).toBe(true);
  });

  it("SandboxClient speaks to the server directly", async () => {
    await harness.server.containers.ensure("direct");
    expect(await run("client")).toEqual({ pong: "pong", stdout: "direct\n", content: "via client" });
  });
});
