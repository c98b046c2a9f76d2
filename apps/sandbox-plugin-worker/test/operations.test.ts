/**
 * Exec, exec.stream framing, files and port forwarding against one sandbox, through the protocol client.
 * Port 8080 of the instance is the harness's echo server (see test/support/containers-shim.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, IMAGE, startHarness } from "./support/harness.js";
import { type ProtocolClient, createProtocolClient } from "./support/protocol-client.js";

let harness: Harness;
let client: ProtocolClient;
const ID = "workbench";

beforeAll(async () => {
  harness = await startHarness();
  client = createProtocolClient({
    baseUrl: harness.url,
    token: harness.token,
    installation: "operations",
  });
  await client.create({ id: ID, template: { image: IMAGE }, env: { FROM_CREATE: "create-env" } });
});
afterAll(() => harness?.stop());

describe("exec", () => {
  it("runs argv without a shell, with cwd and per-call env over the create env", async () => {
    expect(
      await client.exec(ID, { argv: ["printf", "%s|", "a b", "it's", "$HOME"] }),
    ).toMatchObject({ exitCode: 0, stdout: "a b|it's|$HOME|" });
    await client.makeDirectory(ID, "/workspace/sub", true);
    expect((await client.exec(ID, { argv: ["pwd"], cwd: "/workspace/sub" })).stdout).toBe(
      "/workspace/sub\n",
    );
    const env = await client.exec(ID, {
      argv: ["sh", "-c", 'echo "$FROM_CREATE/$PER_CALL"'],
      env: { PER_CALL: "call-env" },
    });
    expect(env.stdout).toBe("create-env/call-env\n");
  });

  it("stops a command at timeoutMs and says so", async () => {
    const result = await client.exec(ID, { argv: ["sleep", "20"], timeoutMs: 500 });
    expect(result).toMatchObject({ exitCode: 124, timedOut: true });
    expect(result.durationMs).toBeLessThan(10_000);
  });
});

describe("exec.stream", () => {
  it("answers application/x-ndjson: one JSON line per chunk, in order, ending with exit", async () => {
    const { contentType, text, lines } = await client.execStream(ID, {
      argv: [
        "sh",
        "-c",
        "printf 'out 1\\n'; sleep 0.2; printf 'err ✓\\n' >&2; sleep 0.2; printf 'multi\\nline'; exit 5",
      ],
    });
    expect(contentType).toBe("application/x-ndjson");
    expect(
      text
        .split("\n")
        .filter(Boolean)
        .every((line) => line.startsWith("{") && line.endsWith("}")),
    ).toBe(true);
    expect(lines.at(-1)).toEqual({ type: "exit", exitCode: 5, timedOut: false });
    const stdout = lines.flatMap((line) => (line.type === "stdout" ? [line.data] : [])).join("");
    const stderr = lines.flatMap((line) => (line.type === "stderr" ? [line.data] : [])).join("");
    expect(stdout).toBe("out 1\nmulti\nline");
    expect(stderr).toBe("err ✓\n");
    expect(lines.findIndex((line) => line.type === "stderr")).toBeGreaterThan(
      lines.findIndex((line) => line.type === "stdout"),
    );
  });

  it("reports a deadline on the exit line", async () => {
    const { lines } = await client.execStream(ID, { argv: ["sleep", "20"], timeoutMs: 500 });
    expect(lines).toEqual([{ type: "exit", exitCode: 124, timedOut: true }]);
  });
});

describe("files", () => {
  it("round-trips every byte value and creates parent directories", async () => {
    const bytes = Uint8Array.from({ length: 4_096 }, (_, index) => index % 256);
    expect(await client.writeFile(ID, "/workspace/deep/er/bytes.bin", bytes)).toEqual({
      path: "/workspace/deep/er/bytes.bin",
      size: 4_096,
    });
    expect(await client.readFile(ID, "/workspace/deep/er/bytes.bin")).toEqual(bytes);
    expect(
      await client.readFile(ID, "/workspace/deep/er/bytes.bin").then((read) => read.byteLength),
    ).toBe(4_096);
    await client.writeFile(ID, "/workspace/empty.txt", "");
    expect((await client.readFile(ID, "/workspace/empty.txt")).byteLength).toBe(0);
  });

  it("reads a file larger than one transfer chunk intact", async () => {
    const text = "0123456789abcdef".repeat(16 * 1_024);
    await client.writeFile(ID, "/workspace/large.txt", text);
    expect(new TextDecoder().decode(await client.readFile(ID, "/workspace/large.txt"))).toBe(text);
  });

  it("makes, lists and removes directories", async () => {
    await client.makeDirectory(ID, "/workspace/tree/a/b", true);
    await client.writeFile(ID, "/workspace/tree/a/one.txt", "1");
    await client.writeFile(ID, "/workspace/tree/.hidden", "h");
    const listing = await client.listDirectory(ID, "/workspace/tree");
    expect(listing.entries.map((entry) => [entry.name, entry.type]).sort()).toEqual([
      [".hidden", "file"],
      ["a", "directory"],
    ]);
    const recursive = await client.listDirectory(ID, "/workspace/tree", true);
    expect(recursive.entries.map((entry) => entry.path).sort()).toEqual([
      "/workspace/tree/.hidden",
      "/workspace/tree/a",
      "/workspace/tree/a/b",
      "/workspace/tree/a/one.txt",
    ]);
    await client.removePath(ID, "/workspace/tree/a/one.txt");
    await client.removePath(ID, "/workspace/tree", true);
    expect(await client.failure(() => client.listDirectory(ID, "/workspace/tree"))).toMatchObject({
      status: 404,
    });
    expect(await client.failure(() => client.removePath(ID, "/", true))).toMatchObject({
      code: "invalid_request",
    });
  });
});

describe("ports", () => {
  it("forwards method, path, query and body to the instance's port, without the plugin token or installation", async () => {
    const response = await client.port(ID, 8080, "/hooks/run?x=1&y=two", {
      method: "POST",
      body: "payload",
      headers: { "X-Custom": "kept" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-app")).toBe("echo");
    const echoed = (await response.json()) as {
      method: string;
      url: string;
      body: string;
      headers: Record<string, string>;
    };
    expect(echoed).toMatchObject({ method: "POST", url: "/hooks/run?x=1&y=two", body: "payload" });
    expect(echoed.headers["x-custom"]).toBe("kept");
    expect(echoed.headers.authorization).toBeUndefined();
    expect(echoed.headers["differently-installation"]).toBeUndefined();
    expect(JSON.stringify(echoed)).not.toContain(harness.token);
    const root = await client.port(ID, 8080, "");
    expect(((await root.json()) as { url: string }).url).toBe("/");
  });
});
