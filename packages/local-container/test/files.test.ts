import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, parseDataFrames, startTestServer } from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
let harness: TestServer;

beforeAll(async () => {
  harness = await startTestServer();
  await harness.start("files");
});
afterAll(() => harness.stop());

const post = (path: string, body: Record<string, unknown>) =>
  harness.json("files", "POST", path, { sessionId: SESSIONLESS, ...body });

describe("write and read", () => {
  it("writes UTF-8 text creating parents, and reads it back with its metadata", async () => {
    const written = await post("/api/write", {
      path: "/workspace/deep/nested/note.md",
      content: "héllo ✓\n",
    });
    expect(written.body).toMatchObject({ success: true, path: "/workspace/deep/nested/note.md" });
    const read = await post("/api/read", { path: "/workspace/deep/nested/note.md" });
    expect(read.body).toMatchObject({
      success: true,
      content: "héllo ✓\n",
      encoding: "utf-8",
      isBinary: false,
      mimeType: "text/markdown",
      size: Buffer.byteLength("héllo ✓\n"),
    });
  });

  it("round-trips binary content through base64 write and read", async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 254, 0, 10]);
    await post("/api/write", {
      path: "/workspace/blob.bin",
      content: bytes.toString("base64"),
      encoding: "base64",
    });
    const read = await post("/api/read", { path: "/workspace/blob.bin" });
    expect(read.body).toMatchObject({
      encoding: "base64",
      isBinary: true,
      mimeType: "application/octet-stream",
      size: 7,
    });
    expect(Buffer.from(String(read.body.content), "base64").equals(bytes)).toBe(true);
    const asked = await post("/api/read", {
      path: "/workspace/deep/nested/note.md",
      encoding: "base64",
    });
    expect(Buffer.from(String(asked.body.content), "base64").toString("utf8")).toBe("héllo ✓\n");
  });

  it("sees what commands write and commands see what the file routes write", async () => {
    await harness.json("files", "POST", "/api/execute", {
      command: "printf made-by-shell > /mnt/session/outputs/out.txt",
      sessionId: SESSIONLESS,
    });
    expect((await post("/api/read", { path: "/mnt/session/outputs/out.txt" })).body.content).toBe(
      "made-by-shell",
    );
    await post("/api/write", { path: "/tmp/from-api.txt", content: "api" });
    const cat = await harness.json("files", "POST", "/api/execute", {
      command: "cat /tmp/from-api.txt",
      sessionId: SESSIONLESS,
    });
    expect(cat.body.stdout).toBe("api");
  });

  it("resolves every path in the container's copy-on-write root: /etc writes land in its tree, never the host's", async () => {
    const hostname = await post("/api/read", { path: "/etc/hostname" });
    expect(hostname.status).toBe(200);
    const written = await post("/api/write", {
      path: "/workspace/../../etc/oma-files-probe",
      content: "x",
    });
    expect(written.body).toMatchObject({ success: true, path: "/etc/oma-files-probe" });
    expect(existsSync("/etc/oma-files-probe")).toBe(false);
    const seen = await harness.json("files", "POST", "/api/execute", {
      command: "cat /etc/oma-files-probe",
      sessionId: SESSIONLESS,
    });
    expect(seen.body.stdout).toBe("x");
    expect(
      readFileSync(join(harness.rootDir, "files", "upper", "etc", "oma-files-probe"), "utf8"),
    ).toBe("x");
  });
});

describe("/api/read/stream", () => {
  it("answers a missing file with 200 and one error frame", async () => {
    const response = await harness.call("files", "POST", "/api/read/stream", {
      path: "/workspace/cap/missing.txt",
      sessionId: SESSIONLESS,
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(
      'data: {"type":"error","error":"File not found: /workspace/cap/missing.txt"}\n\n',
    );
  });

  it("streams a large binary file as base64 chunks that each decode on their own", async () => {
    const bytes = randomBytes(1024 * 1024 + 7);
    await post("/api/write", {
      path: "/tmp/archive.tar",
      content: bytes.toString("base64"),
      encoding: "base64",
    });
    const response = await harness.call("files", "POST", "/api/read/stream", {
      path: "/tmp/archive.tar",
      sessionId: SESSIONLESS,
    });
    const frames = parseDataFrames(await response.text());
    expect(frames[0]).toEqual({
      type: "metadata",
      mimeType: "application/x-tar",
      size: bytes.length,
      isBinary: true,
      encoding: "base64",
    });
    const chunks = frames
      .filter((frame) => frame.type === "chunk")
      .map((frame) => Buffer.from(String(frame.data), "base64"));
    expect(chunks.length).toBeGreaterThan(1);
    const joined = Buffer.concat(chunks);
    expect(createHash("sha256").update(joined).digest("hex")).toBe(
      createHash("sha256").update(bytes).digest("hex"),
    );
    expect(frames.at(-1)).toEqual({ type: "complete", bytesRead: bytes.length });
  });
});

describe("directory operations", () => {
  it("mkdir fails like the mkdir command without recursive, and succeeds with it", async () => {
    const failed = await post("/api/mkdir", { path: "/workspace/a/b/c", recursive: false });
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({
      code: "FILESYSTEM_ERROR",
      message: "mkdir operation failed with exit code 1",
      context: { path: "/workspace/a/b/c", options: { recursive: false }, exitCode: 1 },
    });
    expect(String((failed.body.context as Record<string, unknown>).stderr)).toContain(
      "mkdir: cannot create directory",
    );
    const made = await post("/api/mkdir", { path: "/workspace/a/b/c", recursive: true });
    expect(made.body).toMatchObject({ success: true, path: "/workspace/a/b/c", recursive: true });
    expect((await post("/api/exists", { path: "/workspace/a/b/c" })).body).toMatchObject({
      success: true,
      exists: true,
    });
    expect((await post("/api/exists", { path: "/workspace/a/zzz" })).body.exists).toBe(false);
  });

  it("lists files, hiding dot files unless asked, recursing when asked", async () => {
    await post("/api/write", { path: "/workspace/list/one.txt", content: "1" });
    await post("/api/write", { path: "/workspace/list/.hidden", content: "h" });
    await post("/api/write", { path: "/workspace/list/sub/two.txt", content: "22" });
    const flat = await post("/api/list-files", { path: "/workspace/list", options: {} });
    const files = flat.body.files as Record<string, unknown>[];
    expect(files.map((file) => file.name).sort()).toEqual(["one.txt", "sub"]);
    expect(files.find((file) => file.name === "one.txt")).toMatchObject({
      absolutePath: "/workspace/list/one.txt",
      relativePath: "one.txt",
      type: "file",
      size: 1,
      mode: "rw-r--r--",
    });
    expect(files.find((file) => file.name === "one.txt")?.permissions).toEqual({
      readable: true,
      writable: true,
      executable: false,
    });
    expect(flat.body.count).toBe(2);
    const deep = await post("/api/list-files", {
      path: "/workspace/list",
      options: { recursive: true, includeHidden: true },
    });
    expect(
      (deep.body.files as Record<string, unknown>[])
        .map((file) => String(file.relativePath))
        .sort(),
    ).toEqual([".hidden", "one.txt", "sub", "sub/two.txt"]);
  });

  it("lists in the order of the find command the published server runs: directory order, each directory followed by its entries", async () => {
    const names = [
      "m.txt",
      "b",
      "z.txt",
      "a.txt",
      "b/y.txt",
      "b/c",
      "b/c/x.txt",
      "k.txt",
      "b/d.txt",
    ];
    for (const name of names)
      await harness.json("files", "POST", "/api/execute", {
        command: name.endsWith(".txt")
          ? `mkdir -p /workspace/order/$(dirname ${name}) && echo > /workspace/order/${name}`
          : `mkdir -p /workspace/order/${name}`,
        sessionId: SESSIONLESS,
      });
    const found = await harness.json("files", "POST", "/api/execute", {
      command: "find /workspace/order -mindepth 1 -printf '%P\\n'",
      sessionId: SESSIONLESS,
    });
    const order = String(found.body.stdout).trim().split("\n");
    expect([...order].sort()).toEqual([...names].sort());
    const listed = await post("/api/list-files", {
      path: "/workspace/order",
      options: { recursive: true },
    });
    expect(
      (listed.body.files as Record<string, unknown>[]).map((file) => file.relativePath),
    ).toEqual(order);
    const top = await post("/api/list-files", { path: "/workspace/order", options: {} });
    const foundTop = await harness.json("files", "POST", "/api/execute", {
      command: "find /workspace/order -mindepth 1 -maxdepth 1 -printf '%P\\n'",
      sessionId: SESSIONLESS,
    });
    expect((top.body.files as Record<string, unknown>[]).map((file) => file.name)).toEqual(
      String(foundTop.body.stdout).trim().split("\n"),
    );
  });

  it("deletes, renames and moves, with 404 FILE_NOT_FOUND for missing sources", async () => {
    await post("/api/write", { path: "/workspace/mv/a.txt", content: "a" });
    const renamed = await harness.json("files", "POST", "/api/rename", {
      oldPath: "/workspace/mv/a.txt",
      newPath: "/workspace/mv/b.txt",
      sessionId: SESSIONLESS,
    });
    expect(renamed.body).toMatchObject({
      success: true,
      path: "/workspace/mv/a.txt",
      newPath: "/workspace/mv/b.txt",
    });
    const moved = await harness.json("files", "POST", "/api/move", {
      sourcePath: "/workspace/mv/b.txt",
      destinationPath: "/mnt/session/outputs/c.txt",
      sessionId: SESSIONLESS,
    });
    expect(moved.body).toMatchObject({
      success: true,
      path: "/workspace/mv/b.txt",
      newPath: "/mnt/session/outputs/c.txt",
    });
    expect((await post("/api/read", { path: "/mnt/session/outputs/c.txt" })).body.content).toBe(
      "a",
    );
    const deleted = await post("/api/delete", { path: "/mnt/session/outputs/c.txt" });
    expect(deleted.body).toMatchObject({ success: true, path: "/mnt/session/outputs/c.txt" });
    const missing = await post("/api/delete", { path: "/mnt/session/outputs/c.txt" });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: "FILE_NOT_FOUND", operation: "file.delete" });
    const directory = await post("/api/delete", { path: "/workspace/mv" });
    expect(directory.status).toBe(400);
    expect(directory.body).toMatchObject({
      code: "IS_DIRECTORY",
      operation: "file.delete",
      message:
        "Cannot delete directory with deleteFile() at '/workspace/mv'. Use exec('rm -rf <path>') instead.",
    });
    const noSource = await harness.json("files", "POST", "/api/rename", {
      oldPath: "/workspace/none",
      newPath: "/workspace/x",
      sessionId: SESSIONLESS,
    });
    expect(noSource.status).toBe(404);
  });
});
