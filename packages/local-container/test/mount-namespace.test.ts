/**
 * Each container's mount table is set up once (`createMountNamespace`) and released on destroy, and a
 * container tree may live under /tmp, which every container also maps to its own directory.
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { detectPathMappingMode } from "@open-managed-agents/local-confinement";
import { afterEach, describe, expect, it } from "vitest";
import type { PathMapping } from "../src/server/options.js";
import { type TestServer, startTestServer, authorizedFetch } from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
const namespacesWork = detectPathMappingMode() === "namespace";
let harness: TestServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** This process's descriptors by what they point at; sockets come and go with HTTP keep-alive, so they are left out. */
function openDescriptors(): string[] {
  const targets: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (!target.startsWith("socket:")) targets.push(target);
    } catch {
      // The descriptor readdir itself used, closed by now.
    }
  }
  return targets.sort();
}

/** Children of this process that set a namespace up or enter one. */
function namespaceHelpers(): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (Number(fields[1]) === process.pid && (command === "unshare" || command === "nsenter"))
        found.push(`${entry} ${command}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

const run = async (
  id: string,
  command: string,
  sessionId = SESSIONLESS,
): Promise<Record<string, unknown>> =>
  (await (harness as TestServer).json(id, "POST", "/api/execute", { command, sessionId })).body;

describe.skipIf(!namespacesWork)("one mount namespace per container", () => {
  it("runs every command, the first included, in the container's namespace, and destroy releases it", async () => {
    harness = await startTestServer({}, "namespace");
    // A first container warms up what stays open for the life of the process (modules, pools).
    await harness.start("warm");
    await run("warm", "true");
    await authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/warm`, {
      method: "DELETE",
    });
    const before = openDescriptors();

    await harness.start("ns-a");
    await harness.start("ns-b");
    const namespaceOf = async (id: string): Promise<string> =>
      String((await run(id, "readlink /proc/self/ns/mnt")).stdout).trim();
    const [firstA, secondA, firstB] = [
      await namespaceOf("ns-a"),
      await namespaceOf("ns-a"),
      await namespaceOf("ns-b"),
    ];
    expect(firstA).toMatch(/^mnt:\[\d+\]$/);
    expect(secondA).toBe(firstA);
    expect(firstB).not.toBe(firstA);
    expect(openDescriptors().filter((target) => target.startsWith("mnt:"))).toHaveLength(2);

    for (const id of ["ns-a", "ns-b"])
      await authorizedFetch(harness.server, `${harness.server.url}/__oma/containers/${id}`, {
        method: "DELETE",
      });
    expect(openDescriptors()).toEqual(before);
    expect(namespaceHelpers()).toEqual([]);
  });

  it("close() releases every container's namespace", async () => {
    harness = await startTestServer({}, "namespace");
    const before = openDescriptors().filter((target) => target.startsWith("mnt:")).length;
    await harness.start("closing");
    await run("closing", "true");
    expect(openDescriptors().filter((target) => target.startsWith("mnt:"))).toHaveLength(
      before + 1,
    );
    await harness.stop();
    harness = undefined;
    expect(openDescriptors().filter((target) => target.startsWith("mnt:"))).toHaveLength(before);
  });
});

describe.each<PathMapping>(namespacesWork ? ["namespace", "rewrite"] : ["rewrite"])(
  "a root directory under /tmp (%s)",
  (mapping) => {
    it("serves files, commands and session working directories from the container's own trees", async () => {
      harness = await startTestServer({}, mapping, "/tmp");
      expect(harness.rootDir.startsWith("/tmp/")).toBe(true);
      await harness.start("tmp-root");
      const hostTree = join(harness.rootDir, "tmp-root");

      const written = await harness.json("tmp-root", "POST", "/api/write", {
        path: "/workspace/a.txt",
        content: "alpha",
        sessionId: SESSIONLESS,
      });
      expect(written.status).toBe(200);
      expect(readFileSync(join(hostTree, "workspace", "a.txt"), "utf8")).toBe("alpha");
      expect(await run("tmp-root", "cat /workspace/a.txt; echo beta > /tmp/b.txt")).toMatchObject({
        exitCode: 0,
        stdout: "alpha",
      });
      expect(readFileSync(join(hostTree, "tmp", "b.txt"), "utf8")).toBe("beta\n");
      expect(
        (
          await harness.json("tmp-root", "POST", "/api/read", {
            path: "/tmp/b.txt",
            sessionId: SESSIONLESS,
          })
        ).body,
      ).toMatchObject({ content: "beta\n" });

      // The session's cwd comes back as the shell saw it; it must reach the same directory, mapped once.
      expect(
        await run("tmp-root", "mkdir -p /workspace/sub && cd /workspace/sub", "s"),
      ).toMatchObject({ exitCode: 0 });
      await harness.json("tmp-root", "POST", "/api/write", {
        path: "relative.txt",
        content: "r",
        sessionId: "s",
      });
      expect(readFileSync(join(hostTree, "workspace", "sub", "relative.txt"), "utf8")).toBe("r");
      expect(await run("tmp-root", "ls; cat relative.txt", "s")).toMatchObject({
        exitCode: 0,
        stdout: "relative.txt\nr",
      });
    });
  },
);
