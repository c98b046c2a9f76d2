/**
 * Start failures (made by the test runtime's failure hook, with the messages Cloudflare raises), an instance
 * that stops on its own (killed on the local container server), TTL expiry through the object's alarm, and
 * the error answers of operations.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Harness,
  IMAGE,
  TEST_MAX_FILE_BYTES,
  startHarness,
  waitFor,
} from "./support/harness.js";
import { type ProtocolClient, createProtocolClient } from "./support/protocol-client.js";

let harness: Harness;
let client: ProtocolClient;
const liveContainers = (): string[] =>
  harness.containers.containers.list().map((container) => container.id);
const failing = (id: string, mode: string) =>
  client.create({ id, template: { image: IMAGE }, env: { OMA_TEST_START_FAILURE: mode } });

beforeAll(async () => {
  harness = await startHarness();
  client = createProtocolClient({
    baseUrl: harness.url,
    token: harness.token,
    installation: "failures",
  });
});
afterAll(() => harness?.stop());

describe("start failures", () => {
  it("an account without a free instance → insufficient_capacity (503), nothing left behind, and a replay tries again", async () => {
    const error = await client.failure(() => failing("no-capacity", "capacity"));
    expect(error).toMatchObject({ status: 503, code: "insufficient_capacity" });
    expect(error.message).toContain("there is no container instance");
    expect(await client.failure(() => client.get("no-capacity"))).toMatchObject({ status: 404 });
    expect((await client.list()).sandboxes.map((sandbox) => sandbox.id)).not.toContain(
      "no-capacity",
    );
    expect(await client.failure(() => failing("no-capacity", "capacity"))).toMatchObject({
      code: "insufficient_capacity",
    });
  });

  it("an image the application does not have → invalid_request (400)", async () => {
    const error = await client.failure(() => failing("no-image", "image"));
    expect(error).toMatchObject({
      status: 400,
      code: "invalid_request",
      context: { phase: "start", image: IMAGE },
    });
    expect(await client.failure(() => client.get("no-image"))).toMatchObject({ status: 404 });
  });

  it("an instance that does not start → sandbox_failed (502)", async () => {
    const error = await client.failure(() => failing("crashes", "crash"));
    expect(error).toMatchObject({
      status: 502,
      code: "sandbox_failed",
      context: { phase: "start" },
    });
    expect(error.message).toContain("container exited with unexpected exit code: 1");
    expect((await client.list()).sandboxes.map((sandbox) => sandbox.id)).not.toContain("crashes");
  });
});

describe("an instance that stops on its own", () => {
  it("is reported stopped and lost, is never restarted behind the caller's back, and can be deleted", async () => {
    await client.create({ id: "doomed", template: { image: IMAGE } });
    await client.writeFile("doomed", "/workspace/state.txt", "will be lost");
    const containerId = await harness.containerIdOf("SANDBOX_STANDARD_1", "doomed");
    expect(await harness.containers.containers.destroy(containerId)).toBe(true);

    const lost = await client.failure(() =>
      client.exec("doomed", { argv: ["cat", "/workspace/state.txt"] }),
    );
    expect(lost).toMatchObject({ status: 502, code: "sandbox_failed", context: { lost: true } });
    expect(await client.get("doomed")).toMatchObject({ state: "stopped", lost: true });
    expect(
      (await client.list()).sandboxes.find((sandbox) => sandbox.id === "doomed"),
    ).toMatchObject({ state: "stopped", lost: true });
    expect(
      await client.failure(() => client.readFile("doomed", "/workspace/state.txt")),
    ).toMatchObject({ code: "sandbox_failed" });
    expect(await client.failure(() => client.setTtl("doomed", 60))).toMatchObject({
      code: "sandbox_failed",
    });
    expect(liveContainers()).not.toContain(containerId);

    expect(
      (await client.create({ id: "doomed", template: { image: IMAGE } })).body.sandbox,
    ).toMatchObject({ state: "stopped", lost: true });
    expect(await client.delete("doomed")).toEqual({ id: "doomed", deleted: true });
    expect(await client.failure(() => client.get("doomed"))).toMatchObject({ status: 404 });
  });
});

describe("TTL", () => {
  it("the object's alarm destroys the sandbox when its TTL passes; an updated TTL moves the expiry", async () => {
    await client.create({ id: "short-lived", template: { image: IMAGE }, ttlSeconds: 2 });
    await client.create({ id: "extended", template: { image: IMAGE }, ttlSeconds: 2 });
    await client.setTtl("extended", 60);
    const shortContainer = await harness.containerIdOf("SANDBOX_STANDARD_1", "short-lived");

    // Nothing calls the sandbox meanwhile: only the alarm can expire it.
    expect(await waitFor(() => !liveContainers().includes(shortContainer), 15_000)).toBe(true);
    expect(await client.failure(() => client.get("short-lived"))).toMatchObject({ status: 404 });
    expect((await client.list()).sandboxes.map((sandbox) => sandbox.id)).toEqual(["extended"]);
    expect(await client.get("extended")).toMatchObject({ state: "running" });

    const extendedContainer = await harness.containerIdOf("SANDBOX_STANDARD_1", "extended");
    await client.setTtl("extended", 1);
    expect(await waitFor(() => !liveContainers().includes(extendedContainer), 15_000)).toBe(true);
    expect((await client.list()).sandboxes).toEqual([]);
  });
});

describe("operation errors", () => {
  beforeAll(async () => {
    await client.create({ id: "ops", template: { image: IMAGE } });
    await client.makeDirectory("ops", "/workspace/dir", true);
  });

  it("files: missing → not_found, a directory read → invalid_request, an oversize body → limit_exceeded, a relative path → invalid_request", async () => {
    expect(
      await client.failure(() => client.readFile("ops", "/workspace/missing.txt")),
    ).toMatchObject({ status: 404, code: "not_found" });
    expect(await client.failure(() => client.readFile("ops", "/workspace/dir"))).toMatchObject({
      status: 400,
      code: "invalid_request",
    });
    expect(
      await client.failure(() =>
        client.writeFile("ops", "/workspace/big.bin", new Uint8Array(TEST_MAX_FILE_BYTES + 1), {
          closeConnection: true,
        }),
      ),
    ).toMatchObject({ status: 413, code: "limit_exceeded" });
    expect(
      await client.failure(() => client.removePath("ops", "/workspace/missing.txt")),
    ).toMatchObject({ status: 404, code: "not_found" });
    expect(
      await client.failure(() => client.removePath("ops", "/workspace/missing", true)),
    ).toMatchObject({ status: 404, code: "not_found" });
    expect(
      await client.failure(() => client.readFile("ops", "workspace/relative.txt")),
    ).toMatchObject({
      status: 400,
      code: "invalid_request",
      context: { field: "path query parameter" },
    });
    expect(
      await client.failure(() => client.listDirectory("ops", "/workspace/missing")),
    ).toMatchObject({ status: 404 });
  });

  it("requests: bad JSON, unknown fields, an empty argv and a missing installation header → invalid_request", async () => {
    const bad = await client.raw("POST", "/adapter/v1/sandboxes/ops/exec", {
      body: "{not json",
      headers: { "Content-Type": "application/json" },
    });
    expect(bad.status).toBe(400);
    expect(await client.failure(() => client.exec("ops", { argv: [] }))).toMatchObject({
      code: "invalid_request",
      context: { field: "argv" },
    });
    expect(
      await client.failure(() => client.exec("ops", { argv: ["true"], stdin: "x" } as never)),
    ).toMatchObject({ code: "invalid_request" });
    const anonymous = await client.raw("GET", "/adapter/v1/sandboxes", {
      headers: { "Differently-Installation": "" },
    });
    expect(anonymous.status).toBe(400);
    expect(
      await client.failure(() => client.create({ id: "-bad-id", template: { image: IMAGE } })),
    ).toMatchObject({ code: "invalid_request", context: { field: "id" } });
    expect(
      await client.failure(() => client.create({ id: "admin", template: { image: IMAGE } })),
    ).toMatchObject({ code: "invalid_request" });
    const unknownRoute = await client.raw("GET", "/adapter/v1/nothing-here");
    expect(unknownRoute.status).toBe(404);
    expect(await unknownRoute.json()).toMatchObject({ code: "not_found" });
  });

  it("ports: the control port is refused and a port nothing listens on → sandbox_failed", async () => {
    const control = await client.port("ops", 3000, "/api/ping");
    expect(control.status).toBe(400);
    expect(await control.json()).toMatchObject({ code: "invalid_request" });
    const silent = await client.port("ops", 9090, "/");
    expect(silent.status).toBe(502);
    expect(await silent.json()).toMatchObject({ code: "sandbox_failed", context: { port: 9090 } });
  });
});
