/**
 * The plugin Worker in local workerd with the real Sandbox Durable Object and SDK client; only the container
 * is the local container runtime. A protocol client drives it as the platform would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, IMAGE, SMALL_IMAGE, startHarness } from "./support/harness.js";
import { type ProtocolClient, createProtocolClient } from "./support/protocol-client.js";

let harness: Harness;
let client: ProtocolClient;
const clientFor = (installation: string): ProtocolClient =>
  createProtocolClient({ baseUrl: harness.url, token: harness.token, installation });
const liveContainers = (): string[] =>
  harness.containers.containers.list().map((container) => container.id);

beforeAll(async () => {
  harness = await startHarness();
  client = clientFor("lifecycle");
});
afterAll(() => harness?.stop());

describe("info and OpenAPI", () => {
  it("declares exactly exec, exec.stream, files and isolation.microvm, and no snapshots or fork", async () => {
    const info = await client.info();
    expect(info.protocol).toBe(1);
    expect(info.capabilities).toEqual(["exec", "exec.stream", "files", "isolation.microvm"]);
    expect(info.unsupported).toEqual(
      expect.arrayContaining([
        "snapshots.disk",
        "fork",
        "lifecycle.stop-start",
        "lifecycle.pause-resume",
      ]),
    );
    expect(info.templates).toEqual([
      {
        image: IMAGE,
        instanceTypes: [
          { name: "standard-1", vcpu: 0.5, memoryMib: 4_096, diskMb: 8_000 },
          { name: "standard-4", vcpu: 4, memoryMib: 12_288, diskMb: 20_000 },
        ],
      },
      {
        image: SMALL_IMAGE,
        instanceTypes: [{ name: "basic", vcpu: 0.25, memoryMib: 1_024, diskMb: 4_000 }],
      },
    ]);
  });

  it("serves an OpenAPI 3.1 document covering every route, with schemas from the validators", async () => {
    const response = await client.raw("GET", "/adapter/v1/openapi.json");
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties?: object }> };
    };
    expect(document.openapi).toBe("3.1.0");
    const sandbox = "/adapter/v1/sandboxes/{id}";
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/adapter/v1/info",
        "/adapter/v1/sandboxes",
        sandbox,
        `${sandbox}/ttl`,
        `${sandbox}/exec`,
        `${sandbox}/exec/stream`,
        `${sandbox}/files`,
        `${sandbox}/directories`,
        `${sandbox}/ports/{port}/{path}`,
        `${sandbox}/stop`,
        `${sandbox}/fork`,
      ]),
    );
    expect(Object.keys(document.paths["/adapter/v1/sandboxes"] ?? {})).toEqual(["post", "get"]);
    expect(Object.keys(document.components.schemas.CreateSandboxRequest?.properties ?? {})).toEqual(
      ["id", "template", "size", "env", "ttlSeconds", "fromSnapshot"],
    );
  });
});

describe("the whole lifecycle", () => {
  it("create, inspect, exec, files, stream, TTL, list, delete, and delete again", async () => {
    const created = await client.create({
      id: "life-1",
      template: { image: IMAGE },
      env: { GREETING: "hello from env" },
      ttlSeconds: 600,
    });
    expect(created.status).toBe(201);
    expect(created.body.created).toBe(true);
    expect(created.body.sandbox).toMatchObject({
      id: "life-1",
      installation: "lifecycle",
      image: IMAGE,
      instanceType: "standard-1",
      state: "running",
      lost: false,
    });
    expect(
      Date.parse(created.body.sandbox.expiresAt) - Date.parse(created.body.sandbox.createdAt),
    ).toBe(600_000);
    const containerId = await harness.containerIdOf("SANDBOX_STANDARD_1", "life-1");
    expect(liveContainers()).toContain(containerId);

    expect(await client.get("life-1")).toEqual(created.body.sandbox);
    const run = await client.exec("life-1", {
      argv: ["sh", "-c", 'echo "$GREETING"; echo "$EXTRA" >&2; exit 7'],
      env: { EXTRA: "per call" },
    });
    expect(run).toMatchObject({
      exitCode: 7,
      stdout: "hello from env\n",
      stderr: "per call\n",
      timedOut: false,
    });

    await client.writeFile("life-1", "/workspace/notes/today.txt", "written");
    expect(
      new TextDecoder().decode(await client.readFile("life-1", "/workspace/notes/today.txt")),
    ).toBe("written");
    const streamed = await client.execStream("life-1", {
      argv: ["cat", "/workspace/notes/today.txt"],
    });
    expect(streamed.lines).toEqual([
      { type: "stdout", data: "written" },
      { type: "exit", exitCode: 0, timedOut: false },
    ]);

    const extended = await client.setTtl("life-1", 7_200);
    expect(Date.parse(extended.expiresAt) - Date.now()).toBeGreaterThan(7_100_000);
    expect((await client.list()).sandboxes.map((sandbox) => sandbox.id)).toContain("life-1");

    expect(await client.delete("life-1")).toEqual({ id: "life-1", deleted: true });
    expect(liveContainers()).not.toContain(containerId);
    expect((await client.failure(() => client.get("life-1"))).status).toBe(404);
    expect((await client.list()).sandboxes.map((sandbox) => sandbox.id)).not.toContain("life-1");
    expect(await client.delete("life-1")).toEqual({ id: "life-1", deleted: false });
    expect(await client.delete("never-created")).toEqual({ id: "never-created", deleted: false });
  });
});

describe("idempotent create", () => {
  it("concurrent replays reach one object and one instance: one 201, the rest 200 with the same sandbox", async () => {
    const request = { id: "replayed", template: { image: IMAGE }, env: { A: "1" } };
    const before = liveContainers().length;
    const answers = await Promise.all(Array.from({ length: 6 }, () => client.create(request)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(
      new Set(answers.map((answer) => JSON.stringify({ ...answer.body.sandbox, state: "-" }))).size,
    ).toBe(1);
    expect(liveContainers().length).toBe(before + 1);
    expect(liveContainers()).toContain(
      await harness.containerIdOf("SANDBOX_STANDARD_1", "replayed"),
    );
    const later = await client.create(request);
    expect(later.status).toBe(200);
    expect(later.body.sandbox.createdAt).toBe(answers[0]?.body.sandbox.createdAt);
  });

  it("refuses a create that reuses an id with a different env or size", async () => {
    await client.create({ id: "taken", template: { image: IMAGE }, env: { A: "1" } });
    expect(
      await client.failure(() =>
        client.create({ id: "taken", template: { image: IMAGE }, env: { A: "2" } }),
      ),
    ).toMatchObject({ status: 400, code: "invalid_request" });
    expect(
      await client.failure(() =>
        client.create({ id: "taken", template: { image: IMAGE }, size: "standard-4" }),
      ),
    ).toMatchObject({ status: 400, code: "invalid_request" });
  });
});

describe("sizes and images", () => {
  it("maps a size to the exact or the smallest covering instance type of the template's image", async () => {
    const mapped = async (id: string, size: Parameters<ProtocolClient["create"]>[0]["size"]) =>
      (await client.create({ id, template: { image: IMAGE }, size })).body.sandbox.instanceType;
    expect(await mapped("size-lite", "lite")).toBe("standard-1");
    expect(await mapped("size-s2", "standard-2")).toBe("standard-4");
    expect(await mapped("size-custom", { vcpu: 1, memoryMib: 3_072, diskMb: 6_000 })).toBe(
      "standard-4",
    );
    expect(liveContainers()).toContain(
      await harness.containerIdOf("SANDBOX_STANDARD_4", "size-s2"),
    );
  });

  it("refuses an unknown image, an uncovered size and a custom size outside Cloudflare's rules before starting anything", async () => {
    const before = liveContainers().length;
    expect(
      await client.failure(() =>
        client.create({ id: "bad-1", template: { image: "docker.io/library/nope:1" } }),
      ),
    ).toMatchObject({ status: 400, code: "invalid_request" });
    expect(
      await client.failure(() =>
        client.create({ id: "bad-2", template: { image: SMALL_IMAGE }, size: "standard-2" }),
      ),
    ).toMatchObject({ code: "invalid_request" });
    const custom = await client.failure(() =>
      client.create({
        id: "bad-3",
        template: { image: IMAGE },
        size: { vcpu: 2, memoryMib: 4_096, diskMb: 4_000 },
      }),
    );
    expect(custom).toMatchObject({ code: "invalid_request", context: { field: "size" } });
    expect(custom.message).toContain("3 GiB");
    expect(
      await client.failure(() =>
        client.create({ id: "bad-4", template: { image: IMAGE }, ttlSeconds: 10_000_000 }),
      ),
    ).toMatchObject({ code: "invalid_request" });
    expect(liveContainers().length).toBe(before);
  });
});

describe("list", () => {
  it("pages through an installation's registry and shows nothing of other installations", async () => {
    const paging = clientFor("paging");
    for (const id of ["page-a", "page-b", "page-c"])
      await paging.create({ id, template: { image: SMALL_IMAGE }, size: "basic" });
    const first = await paging.list({ limit: 2 });
    expect(first.sandboxes.map((sandbox) => sandbox.id)).toEqual(["page-a", "page-b"]);
    expect(first.nextCursor).toBe("page-b");
    const second = await paging.list({ limit: 2, cursor: first.nextCursor ?? "" });
    expect(second).toMatchObject({
      sandboxes: [{ id: "page-c", instanceType: "basic", state: "running" }],
      nextCursor: null,
    });

    const other = clientFor("someone-else");
    expect((await other.list()).sandboxes).toEqual([]);
    expect(await other.failure(() => other.get("page-a"))).toMatchObject({
      status: 404,
      code: "not_found",
    });
    expect(await other.failure(() => other.exec("page-a", { argv: ["true"] }))).toMatchObject({
      status: 404,
    });
    expect(await other.delete("page-a")).toEqual({ id: "page-a", deleted: false });
    await paging.delete("page-b");
    expect((await paging.list()).sandboxes.map((sandbox) => sandbox.id)).toEqual([
      "page-a",
      "page-c",
    ]);
  });
});

describe("unsupported operations", () => {
  it("answers unsupported_operation (501) for stop, start, pause, resume, snapshots, fork and fromSnapshot", async () => {
    await client.create({ id: "plain", template: { image: IMAGE } });
    for (const [method, suffix] of [
      ["POST", "stop"],
      ["POST", "start"],
      ["POST", "pause"],
      ["POST", "resume"],
      ["POST", "snapshots"],
      ["GET", "snapshots"],
      ["POST", "fork"],
    ] as const) {
      const response = await client.raw(method, `/adapter/v1/sandboxes/plain/${suffix}`);
      expect(response.status, suffix).toBe(501);
      expect(await response.json()).toMatchObject({ code: "unsupported_operation" });
    }
    expect(
      await client.failure(() =>
        client.create({ id: "from-snap", template: { image: IMAGE }, fromSnapshot: "snap-1" }),
      ),
    ).toMatchObject({ status: 501, code: "unsupported_operation" });
    expect((await client.get("plain")).state).toBe("running");
  });
});
