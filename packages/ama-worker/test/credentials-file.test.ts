import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { type IncomingMessage, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { takeCredentialsFile } from "../src/credentials-file.js";

const distIndex = new URL("../dist/index.js", import.meta.url).href;
const { installAmaWorkerBin } = (await import(distIndex)) as typeof import("../src/install.js");
const directory = await mkdtemp(join(tmpdir(), "oma-ama-worker-credentials-"));
afterAll(() => rm(directory, { recursive: true, force: true }));

const sessionsToken = `st-${"x".repeat(24)}-${process.pid}`;
const secretOf = (payload: Record<string, string>): string =>
  Buffer.from(JSON.stringify(payload)).toString("base64url");

describe("the credentials file", () => {
  it("is read and deleted before the SDK starts; the bin's environment and command line never hold a credential", async () => {
    const requests: IncomingMessage[] = [];
    // Holds the first request (the heartbeat) open, so the bin is caught mid-run.
    const server = createServer((request) => void requests.push(request));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const file = join(directory, "handoff.json");
    const workSecret = secretOf({ sessions_token: sessionsToken, api_base_url: baseUrl });
    await writeFile(file, JSON.stringify({ ANTHROPIC_WORK_SECRET: workSecret }), { mode: 0o600 });
    const bin = await installAmaWorkerBin(directory);
    const child: ChildProcess = spawn(bin, [], {
      env: {
        PATH: "/usr/bin:/bin",
        ANTHROPIC_WORK_ID: "w",
        ANTHROPIC_ENVIRONMENT_ID: "e",
        ANTHROPIC_SESSION_ID: "s",
        OMA_CREDENTIALS_FILE: file,
      },
      stdio: "ignore",
    });
    try {
      for (let tries = 0; tries < 600 && requests.length === 0; tries++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(requests[0]?.headers.authorization).toBe(`Bearer ${sessionsToken}`);
      expect(existsSync(file)).toBe(false);
      const environ = await readFile(`/proc/${child.pid}/environ`, "utf8");
      const cmdline = await readFile(`/proc/${child.pid}/cmdline`, "utf8");
      for (const text of [environ, cmdline]) {
        expect(text).not.toContain(sessionsToken);
        expect(text).not.toContain(workSecret);
      }
    } finally {
      child.kill("SIGKILL");
      server.closeAllConnections();
      server.close();
    }
  }, 60_000);

  it("refuses a file it cannot read or that holds anything but the credentials, and deletes it either way", async () => {
    expect(takeCredentialsFile({})).toEqual({});
    expect(() =>
      takeCredentialsFile({ OMA_CREDENTIALS_FILE: join(directory, "missing.json") }),
    ).toThrow("OMA_CREDENTIALS_FILE names a file that cannot be read");
    for (const content of [
      "not json",
      "[1]",
      JSON.stringify({ PATH: "/evil" }),
      JSON.stringify({ ANTHROPIC_WORK_SECRET: 1 }),
    ]) {
      const file = join(directory, "bad.json");
      await writeFile(file, content);
      expect(() => takeCredentialsFile({ OMA_CREDENTIALS_FILE: file })).toThrow(
        /^OMA_CREDENTIALS_FILE names a file/,
      );
      expect(existsSync(file)).toBe(false);
    }
    const good = join(directory, "good.json");
    await writeFile(good, JSON.stringify({ ANTHROPIC_ENVIRONMENT_KEY: "k-1" }));
    expect(takeCredentialsFile({ OMA_CREDENTIALS_FILE: good })).toEqual({
      ANTHROPIC_ENVIRONMENT_KEY: "k-1",
    });
    expect(existsSync(good)).toBe(false);
  });
});
