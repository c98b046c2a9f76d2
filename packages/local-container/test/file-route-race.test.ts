import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, startTestServer } from "./helpers.js";

/**
 * A process in the container swaps `/workspace/race/target` between a directory and symlinks aimed at a
 * host directory (absolute, and relative with more `..` than the tree is deep) as fast as it can, while
 * the file routes write, read, stream, list, stat, create, move and delete through it many times. The
 * file routes do their I/O inside the container, so the kernel resolves each path in the container's
 * root: the host directory must stay exactly as it was.
 */
const SESSIONLESS = "__DISABLE_SESSION__";
const ROUNDS = 150;
let harness: TestServer;
let sentinel: string;

beforeAll(async () => {
  sentinel = mkdtempSync(join(tmpdir(), "oma-race-sentinel-"));
  writeFileSync(join(sentinel, "victim.txt"), "host-original");
  mkdirSync(join(sentinel, "keep"));
  writeFileSync(join(sentinel, "keep", "inner.txt"), "host-inner");
  harness = await startTestServer();
  await harness.start("race");
});
afterAll(async () => {
  await harness.stop();
  rmSync(sentinel, { recursive: true, force: true });
});

const racer = (target: string): string =>
  [
    'const fs = require("node:fs");',
    'process.chdir("/workspace/race");',
    `const links = [${JSON.stringify(target)}, ${JSON.stringify(`../../../../../../../../..${target}`)}];`,
    "let flips = 0;",
    "const step = (fn) => { try { fn(); } catch {} };",
    "for (;;) {",
    '  step(() => fs.renameSync("target", "aside"));',
    '  step(() => fs.symlinkSync(links[flips % 2], "target"));',
    '  step(() => fs.unlinkSync("target"));',
    '  step(() => fs.renameSync("aside", "target"));',
    '  step(() => fs.mkdirSync("target"));',
    '  step(() => fs.writeFileSync("target/victim.txt", "container"));',
    "  flips += 1;",
    '  if (flips % 500 === 0) step(() => fs.writeFileSync("/tmp/flips", String(flips)));',
    "}",
  ].join("\n");

describe("file routes racing a container process that swaps a directory for symlinks out of its root", () => {
  it("never touch the host directory the symlinks aim at", async () => {
    const call = (path: string, body: Record<string, unknown>) =>
      harness.call("race", "POST", path, { sessionId: SESSIONLESS, ...body });
    expect(
      (await call("/api/mkdir", { path: "/workspace/race/target", recursive: true })).status,
    ).toBe(200);
    const script = racer(sentinel);
    const started = await harness.json("race", "POST", "/api/process/start", {
      command: `node -e '${script.replace(/'/g, "'\\''")}'`,
      sessionId: SESSIONLESS,
      processId: "racer",
    });
    expect(started.body).toMatchObject({ success: true });
    await expect
      .poll(async () => (await call("/api/exists", { path: "/tmp/flips" })).json(), {
        timeout: 30_000,
        interval: 100,
      })
      .toMatchObject({ exists: true });

    const statuses = new Map<number, number>();
    const count = async (response: Promise<Response>): Promise<void> => {
      const answer = await response;
      await answer.arrayBuffer();
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      await Promise.all([
        count(
          call("/api/write", {
            path: "/workspace/race/target/victim.txt",
            content: "from-the-route",
          }),
        ),
        count(
          call("/api/write", {
            path: "/workspace/race/target/keep/inner.txt",
            content: "from-the-route",
          }),
        ),
        count(call("/api/read", { path: "/workspace/race/target/victim.txt" })),
        count(call("/api/read/stream", { path: "/workspace/race/target/keep/inner.txt" })),
        count(
          call("/api/list-files", { path: "/workspace/race/target", options: { recursive: true } }),
        ),
        count(call("/api/exists", { path: "/workspace/race/target/victim.txt" })),
        count(call("/api/mkdir", { path: "/workspace/race/target/new-dir", recursive: true })),
        count(
          call("/api/move", {
            sourcePath: "/workspace/race/target/victim.txt",
            destinationPath: "/workspace/race/target/moved.txt",
          }),
        ),
        count(call("/api/delete", { path: "/workspace/race/target/keep/inner.txt" })),
        count(call("/api/delete", { path: "/workspace/race/target/moved.txt" })),
      ]);
    }
    const flips = Number(
      ((await (await call("/api/read", { path: "/tmp/flips" })).json()) as { content: string })
        .content,
    );
    await harness.call("race", "DELETE", "/api/process/racer");

    // The race ran throughout and the routes answered (some operations find nothing mid-swap).
    expect(flips).toBeGreaterThan(500);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(ROUNDS * 3);
    expect([...statuses.keys()].every((status) => [200, 400, 404, 409, 500].includes(status))).toBe(
      true,
    );
    // The host directory is untouched: same names, same contents.
    expect(readdirSync(sentinel).sort()).toEqual(["keep", "victim.txt"]);
    expect(readdirSync(join(sentinel, "keep"))).toEqual(["inner.txt"]);
    expect(readFileSync(join(sentinel, "victim.txt"), "utf8")).toBe("host-original");
    expect(readFileSync(join(sentinel, "keep", "inner.txt"), "utf8")).toBe("host-inner");
    // And the stack serves the next request.
    const after = await harness.json("race", "POST", "/api/write", {
      path: "/workspace/after.txt",
      content: "ok",
      sessionId: SESSIONLESS,
    });
    expect(after.body).toMatchObject({ success: true });
  }, 180_000);
});
