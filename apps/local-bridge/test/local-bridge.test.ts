/**
 * Cloudflare's own Sandbox Bridge (`@cloudflare/sandbox/bridge` 0.12.10) in local workerd, launched by
 * `startLocalBridge`, over the local container server: the HTTP API as a bridge client sees it.
 */
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridgeClient, decodeOutput, readTar } from "./bridge-client.js";

let bridge: LocalBridge;
let client: ReturnType<typeof bridgeClient>;

beforeAll(async () => {
  bridge = await startLocalBridge();
  client = bridgeClient(bridge.url, bridge.apiKey);
}, 60_000);
afterAll(() => bridge?.stop());

describe("auth and ids", () => {
  it("answers /health without a key and 401 without or with a wrong key", async () => {
    expect(await (await fetch(`${bridge.url}/health`)).json()).toEqual({ ok: true });
    const missing = await fetch(`${bridge.url}/v1/sandbox`, { method: "POST" });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: "Unauthorized", code: "unauthorized" });
    const wrong = await fetch(`${bridge.url}/v1/sandbox`, {
      method: "POST",
      headers: { Authorization: "Bearer not-the-key" },
    });
    expect(wrong.status).toBe(401);
  });

  it("mints 26-character base32 ids", async () => {
    expect(await client.create()).toMatch(/^[a-z2-7]{26}$/);
  });
});

describe("exec", () => {
  it("streams base64 stdout and stderr frames and a final exit event", async () => {
    const id = await client.create();
    const { status, contentType, frames } = await client.exec(id, [
      "sh",
      "-c",
      "echo hi; echo err >&2; exit 3",
    ]);
    expect(status).toBe(200);
    expect(contentType).toContain("text/event-stream");
    expect(frames.map((frame) => frame.event)).toEqual(["stdout", "stderr", "exit"]);
    expect(frames[0]?.data).toBe(Buffer.from("hi\n").toString("base64"));
    expect(decodeOutput(frames, "stderr")).toBe("err\n");
    expect(JSON.parse(frames.at(-1)?.data ?? "{}")).toEqual({ exit_code: 3 });
    const running = await client.request("GET", `/v1/sandbox/${id}/running`);
    expect(await running.json()).toEqual({ running: true });
  });

  it("runs in /workspace, honours cwd, and ends a bad cwd with an exec_transport_error event", async () => {
    const id = await client.create();
    const { frames } = await client.exec(id, ["sh", "-c", "mkdir -p sub && pwd"]);
    expect(decodeOutput(frames, "stdout")).toBe("/workspace\n");
    const inSub = await client.exec(id, ["pwd"], { cwd: "/workspace/sub" });
    expect(decodeOutput(inSub.frames, "stdout")).toBe("/workspace/sub\n");
    const bad = await client.exec(id, ["pwd"], { cwd: "/workspace/missing" });
    expect(bad.frames.at(-1)?.event).toBe("error");
    expect(JSON.parse(bad.frames.at(-1)?.data ?? "{}").code).toBe("exec_transport_error");
  });

  it("applies a bridge session's cwd to execs that send its Session-Id", async () => {
    const id = await client.create();
    await client.exec(id, ["mkdir", "-p", "/workspace/home"]);
    const created = await client.request("POST", `/v1/sandbox/${id}/session`, {
      body: JSON.stringify({ cwd: "/workspace/home" }),
      headers: { "Content-Type": "application/json" },
    });
    const session = ((await created.json()) as { id: string }).id;
    const { frames } = await client.exec(id, ["pwd"], {}, { "Session-Id": session });
    expect(decodeOutput(frames, "stdout")).toBe("/workspace/home\n");
  });
});

describe("files, persist and hydrate", () => {
  it("round-trips text and binary files through PUT and GET", async () => {
    const id = await client.create();
    expect(await (await client.put(id, "workspace/notes/a.txt", "hello bridge\n")).json()).toEqual({
      ok: true,
    });
    expect(await (await client.get(id, "workspace/notes/a.txt")).text()).toBe("hello bridge\n");
    const binary = new Uint8Array([0, 1, 2, 250, 251, 0, 7]);
    await client.put(id, "workspace/blob.bin", binary);
    expect(
      new Uint8Array(await (await client.get(id, "workspace/blob.bin")).arrayBuffer()),
    ).toEqual(binary);
  });

  it("answers a missing file with 200 and an empty body, as the published bridge does", async () => {
    const id = await client.create();
    const response = await client.get(id, "workspace/none.txt");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
  });

  it("persists /workspace as a tar and hydrates it into another sandbox", async () => {
    const source = await client.create();
    await client.put(source, "workspace/a.txt", "alpha");
    await client.put(source, "workspace/dir/b.txt", "beta");
    const persisted = await client.request("POST", `/v1/sandbox/${source}/persist`);
    expect(persisted.status).toBe(200);
    const tar = new Uint8Array(await persisted.arrayBuffer());
    const members = await readTar(tar);
    expect(members.get("./a.txt")).toBe("alpha");
    expect(members.get("./dir/b.txt")).toBe("beta");
    const target = await client.create();
    const hydrated = await client.request("POST", `/v1/sandbox/${target}/hydrate`, { body: tar });
    expect(await hydrated.json()).toEqual({ ok: true });
    expect(await (await client.get(target, "workspace/dir/b.txt")).text()).toBe("beta");
  });
});

describe("quirks and teardown", () => {
  it("answers unknown routes with a plain-text 404", async () => {
    const response = await client.request("GET", "/v1/nope");
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toContain("text/plain");
    expect(await response.text()).toBe("404 Not Found");
  });

  it("DELETE answers 204, wipes the container, and also answers 204 for ids never used", async () => {
    const id = await client.create();
    await client.put(id, "workspace/x.txt", "x");
    const before = bridge.containerServer.containers.list().length;
    const deleted = await client.request("DELETE", `/v1/sandbox/${id}`);
    expect(deleted.status).toBe(204);
    expect(bridge.containerServer.containers.list().length).toBe(before - 1);
    expect((await client.request("DELETE", "/v1/sandbox/neverusedneverused")).status).toBe(204);
    const reused = await client.exec(id, ["sh", "-c", "ls /workspace | wc -l"]);
    expect(decodeOutput(reused.frames, "stdout").trim()).toBe("0");
  });
});
