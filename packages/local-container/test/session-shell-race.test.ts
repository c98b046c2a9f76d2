import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, startTestServer } from "./helpers.js";

/**
 * A process in the container swaps the output and exit files of every session shell for symlinks aimed
 * at a host directory holding a secret (absolute, and relative with more `..` than the tree is deep) as fast as it can, while many sessions run commands. The server
 * reads those files inside the container, so the kernel resolves each path in the container's root: the
 * secret never shows up in a command's output and the host directory stays exactly as it was.
 */
const SESSIONS = 4;
const ROUNDS = 40;
const SECRET = `host-secret-${randomBytes(8).toString("hex")}`;
let harness: TestServer;
let sentinel: string;

beforeAll(async () => {
  sentinel = mkdtempSync(join(tmpdir(), "oma-shell-race-sentinel-"));
  // Shaped like an exit file (status, cwd), so a server that read it would adopt the secret as the cwd.
  writeFileSync(join(sentinel, "secret.txt"), `0\n/${SECRET}`);
  harness = await startTestServer();
  await harness.start("shell-race");
});
afterAll(async () => {
  await harness.stop();
  rmSync(sentinel, { recursive: true, force: true });
});

const racer = (target: string): string =>
  [
    'const fs = require("node:fs");',
    `const files = [${JSON.stringify(`${target}/secret.txt`)}, ${JSON.stringify(`../../../../../../../../..${target}/secret.txt`)}];`,
    "let flips = 0;",
    "const step = (fn) => { try { fn(); } catch {} };",
    "for (;;) {",
    "  let sessions = [];",
    '  step(() => { sessions = fs.readdirSync("/tmp").filter((name) => name.startsWith(".oma-session-")); });',
    "  for (const session of sessions) {",
    '    const directory = "/tmp/" + session;',
    "    let names = [];",
    "    step(() => { names = fs.readdirSync(directory); });",
    "    for (const name of names) {",
    '      if (name.endsWith(".out") && !names.includes(name.replace(/out$/, "exit")) && !names.includes(name.replace(/out$/, "exit.tmp"))) {',
    // A command still running: its exit file does not exist yet, so plant one.
    '        step(() => fs.symlinkSync(files[flips % 2], directory + "/" + name.replace(/out$/, "exit")));',
    "      }",
    "      if (!/\\.(out|err|exit)$/.test(name)) continue;",
    '      const file = directory + "/" + name;',
    '      step(() => fs.renameSync(file, file + ".real"));',
    "      step(() => fs.symlinkSync(files[flips % 2], file));",
    '      step(() => fs.renameSync(file + ".real", file));',
    "      flips += 1;",
    "    }",
    "  }",
    "  flips += 1;",
    '  if (flips % 500 === 0) step(() => fs.writeFileSync("/tmp/flips", String(flips)));',
    "}",
  ].join("\n");

describe("session shells racing a container process that swaps their files for symlinks out of its root", () => {
  it("never return or touch the host files the symlinks aim at", async () => {
    const started = await harness.json("shell-race", "POST", "/api/process/start", {
      command: `node -e '${racer(sentinel).replace(/'/g, "'\\''")}'`,
      sessionId: "__DISABLE_SESSION__",
      processId: "racer",
    });
    expect(started.body).toMatchObject({ success: true });
    const flipsNow = async (): Promise<number> => {
      const answer = await harness.json("shell-race", "POST", "/api/read", {
        path: "/tmp/flips",
        sessionId: "__DISABLE_SESSION__",
      });
      return answer.status === 200 ? Number((answer.body as { content: string }).content) : 0;
    };
    await expect.poll(flipsNow, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);

    const outputs: string[] = [];
    let answered = 0;
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, session) => {
        for (let round = 0; round < ROUNDS; round += 1) {
          const response = await harness.call("shell-race", "POST", "/api/execute", {
            command: `echo out-${round}; sleep 0.1; echo err-${round} >&2`,
            cwd: ".",
            sessionId: `s${session}`,
            timeoutMs: 60_000,
          });
          const text = await response.text();
          outputs.push(text);
          if (response.status === 200) answered += 1;
        }
      }),
    );
    const flips = await flipsNow();
    await harness.call("shell-race", "DELETE", "/api/process/racer");

    // The race ran throughout and the sessions answered.
    expect(flips).toBeGreaterThan(500);
    expect(answered).toBeGreaterThan((SESSIONS * ROUNDS) / 2);
    expect(outputs.filter((text) => text.includes(SECRET))).toEqual([]);
    // The host directory is untouched.
    expect(readdirSync(sentinel)).toEqual(["secret.txt"]);
    expect(readFileSync(join(sentinel, "secret.txt"), "utf8")).toBe(`0\n/${SECRET}`);
    // And a fresh session works.
    const after = await harness.json("shell-race", "POST", "/api/execute", {
      command: "echo fine",
      sessionId: "after",
    });
    expect(after.body, JSON.stringify(after.body)).toMatchObject({ success: true, stdout: "fine" });
  }, 300_000);
});
