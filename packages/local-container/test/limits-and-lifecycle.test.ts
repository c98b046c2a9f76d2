import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  InvalidConfigError,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { afterEach, describe, expect, it } from "vitest";
import { createLocalContainerServer } from "../src/server/server.js";
import {
  type TestServer,
  hostPidOf,
  isAlive,
  startTestServer,
  waitFor,
  authorizedFetch,
} from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
let harness: TestServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe("container lifecycle", () => {
  it("creates idempotently, keeps containers apart, and destroy kills processes and removes the tree", async () => {
    harness = await startTestServer();
    const admin = `${harness.server.url}/__oma/containers`;
    const first = (await (
      await authorizedFetch(harness.server, `${admin}/alpha`, { method: "PUT", body: "{}" })
    ).json()) as Record<string, unknown>;
    const second = (await (
      await authorizedFetch(harness.server, `${admin}/alpha`, { method: "PUT", body: "{}" })
    ).json()) as Record<string, unknown>;
    expect([first.created, second.created]).toEqual([true, false]);
    await harness.start("beta");
    await harness.json("alpha", "POST", "/api/write", {
      path: "/workspace/mine.txt",
      content: "alpha",
      sessionId: SESSIONLESS,
    });
    const other = await harness.json("beta", "POST", "/api/exists", {
      path: "/workspace/mine.txt",
      sessionId: SESSIONLESS,
    });
    expect(other.body.exists).toBe(false);
    const listed = (await (await authorizedFetch(harness.server, admin)).json()) as Record<
      string,
      unknown
    >;
    expect(listed.containers).toEqual(["alpha", "beta"]);
    const started = await harness.json("alpha", "POST", "/api/process/start", {
      command: "sleep 60",
      sessionId: SESSIONLESS,
    });
    const pid = Number(started.body.pid);
    expect(isAlive(pid)).toBe(true);
    const destroyed = (await (
      await authorizedFetch(harness.server, `${admin}/alpha`, { method: "DELETE" })
    ).json()) as Record<string, unknown>;
    expect(destroyed).toMatchObject({ success: true, destroyed: true });
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
    expect(existsSync(join(harness.rootDir, "alpha"))).toBe(false);
    const gone = await harness.call("alpha", "POST", "/api/exists", {
      path: "/workspace",
      sessionId: SESSIONLESS,
    });
    expect(gone.status).toBe(404);
    const again = (await (
      await authorizedFetch(harness.server, `${admin}/alpha`, { method: "DELETE" })
    ).json()) as Record<string, unknown>;
    expect(again.destroyed).toBe(false);
    const badId = await authorizedFetch(harness.server, `${admin}/${encodeURIComponent("../x")}`, {
      method: "PUT",
      body: "{}",
    });
    expect(badId.status).toBe(400);
  });

  it("destroy also kills what finished commands left running, inside or outside their process group", async () => {
    harness = await startTestServer();
    await harness.start("leftovers");
    const run = await harness.json("leftovers", "POST", "/api/execute", {
      command:
        "sleep 60 >/dev/null 2>&1 & echo $!; setsid sleep 61 >/dev/null 2>&1 & sleep 0.2; pgrep -n -f 'sleep 61'",
      sessionId: SESSIONLESS,
    });
    const pids = String(run.body.stdout)
      .trim()
      .split("\n")
      .map((pid) => hostPidOf(harness as TestServer, "leftovers", Number(pid)));
    expect(pids).toHaveLength(2);
    expect(pids.every((pid) => isAlive(pid))).toBe(true);
    await authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/leftovers`, {
      method: "DELETE",
    });
    expect(await waitFor(() => pids.every((pid) => !isAlive(pid)))).toBe(true);
  });

  it("destroy kills what a finished background process left in its group, even without the marker", async () => {
    harness = await startTestServer();
    await harness.start("unmarked");
    // `env -u` drops the marker variable, so only the group signal can reach the sleep.
    const started = await harness.json("unmarked", "POST", "/api/process/start", {
      command: "env -u OMA_LOCAL_CONTAINER sleep 1000 >/dev/null 2>&1 & echo $!",
      sessionId: SESSIONLESS,
    });
    const id = String(started.body.processId);
    const server = harness;
    expect(
      await waitFor(
        async () =>
          (
            (await server.json("unmarked", "GET", `/api/process/${id}`)).body.process as Record<
              string,
              unknown
            >
          ).status === "completed",
      ),
    ).toBe(true);
    const sleeper = hostPidOf(
      harness,
      "unmarked",
      Number(
        String(
          (await harness.json("unmarked", "GET", `/api/process/${id}/logs`)).body.stdout,
        ).trim(),
      ),
    );
    expect(isAlive(sleeper)).toBe(true);
    await authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/unmarked`, {
      method: "DELETE",
    });
    expect(await waitFor(() => !isAlive(sleeper))).toBe(true);
  });

  it("kills a buffered command whose caller gave up", async () => {
    harness = await startTestServer();
    await harness.start("impatient");
    const aborted = new AbortController();
    const pending = authorizedFetch(harness.server, `${harness.server.url}/api/execute`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Oma-Container-Id": "impatient" },
      body: JSON.stringify({
        command: "echo $$ > /tmp/shell.pid; sleep 60",
        sessionId: SESSIONLESS,
      }),
      signal: aborted.signal,
    }).catch(() => undefined);
    const pidFile = { path: "/tmp/shell.pid", sessionId: SESSIONLESS };
    const server = harness;
    await waitFor(
      async () =>
        (await server.json("impatient", "POST", "/api/exists", pidFile)).body.exists === true,
    );
    const pid = hostPidOf(
      server,
      "impatient",
      Number((await server.json("impatient", "POST", "/api/read", pidFile)).body.content),
    );
    expect(isAlive(pid)).toBe(true);
    aborted.abort();
    await pending;
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
  });

  it("close() kills every container's processes", async () => {
    harness = await startTestServer();
    await harness.start("gamma");
    const started = await harness.json("gamma", "POST", "/api/process/start", {
      command: "sleep 60",
      sessionId: SESSIONLESS,
    });
    await harness.stop();
    harness = undefined;
    expect(await waitFor(() => !isAlive(Number(started.body.pid)))).toBe(true);
  });
});

describe("limits", () => {
  it("refuses containers beyond maxContainers with 503", async () => {
    harness = await startTestServer({ maxContainers: 1 });
    await harness.start("one");
    const refused = await authorizedFetch(
      harness.server,
      `${harness.server.url}/__oma/containers/two`,
      { method: "PUT", body: "{}" },
    );
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as Record<string, unknown>).code).toBe(
      "CONTAINER_LIMIT_REACHED",
    );
  });

  it("refuses processes beyond maxProcessesPerContainer with 429", async () => {
    harness = await startTestServer({ maxProcessesPerContainer: 1 });
    await harness.start("busy");
    await harness.json("busy", "POST", "/api/process/start", {
      command: "sleep 60",
      sessionId: SESSIONLESS,
    });
    const refused = await harness.json("busy", "POST", "/api/execute", {
      command: "true",
      sessionId: SESSIONLESS,
    });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe("PROCESS_LIMIT_REACHED");
    const stream = await harness.json("busy", "POST", "/api/execute/stream", {
      command: "true",
      sessionId: SESSIONLESS,
    });
    expect(stream.status).toBe(429);
  });

  it("refuses bodies beyond maxBodyBytes with 413 and truncates output beyond maxOutputBytes", async () => {
    harness = await startTestServer({ maxBodyBytes: 1024, maxOutputBytes: 100 });
    await harness.start("small");
    const big = await harness.json("small", "POST", "/api/write", {
      path: "/workspace/big",
      content: "x".repeat(2048),
      sessionId: SESSIONLESS,
    });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("PAYLOAD_TOO_LARGE");
    const loud = await harness.json("small", "POST", "/api/execute", {
      command: "head -c 5000 /dev/zero | tr '\\0' a",
      sessionId: SESSIONLESS,
    });
    expect(String(loud.body.stdout)).toBe("a".repeat(100));
    expect(String(loud.body.stderr)).toContain("output truncated at 100 bytes");
    await harness.json("small", "POST", "/api/execute", {
      command: "head -c 500 /dev/zero > /workspace/large.bin",
      sessionId: SESSIONLESS,
    });
    const tooLarge = await harness.json("small", "POST", "/api/read", {
      path: "/workspace/large.bin",
      sessionId: SESSIONLESS,
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.code).toBe("FILE_TOO_LARGE");
  });
});

describe("options", () => {
  it("refuses a root directory under /workspace or /mnt/session/outputs, naming the field", async () => {
    const attempt = createLocalContainerServer({ rootDir: "/workspace/oma-containers" });
    await expect(attempt).rejects.toBeInstanceOf(InvalidConfigError);
    await expect(attempt).rejects.toMatchObject({
      code: "invalid_config",
      context: { field: "rootDir", mountPoint: "/workspace" },
    });
    const outputs = createLocalContainerServer({ rootDir: "/mnt/session/outputs" });
    await expect(outputs).rejects.toMatchObject({
      code: "invalid_config",
      context: { field: "rootDir", mountPoint: "/mnt/session/outputs" },
    });
  });

  it("refuses malformed limits and unknown options with InvalidConfigError naming the field", async () => {
    const error = await createLocalContainerServer({
      rootDir: "/var/tmp/x",
      limits: { maxContainers: 0 },
    }).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "invalid_config")).toBe(true);
    expect((error as ManagedRuntimeError).context.field).toBe("limits.maxContainers");
    const unknown = await createLocalContainerServer({
      rootDir: "/var/tmp/x",
      portt: 1,
    } as never).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(unknown, "invalid_config")).toBe(true);
    const exposed = await createLocalContainerServer({
      rootDir: "/var/tmp/x",
      host: "0.0.0.0",
    }).catch((caught: unknown) => caught);
    expect((exposed as ManagedRuntimeError).context.field).toBe("host");
  });
});
