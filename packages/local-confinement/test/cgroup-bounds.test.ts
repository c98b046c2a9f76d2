/**
 * Memory and CPU bounds of a whole confined container through its cgroups. Where the machine gives the
 * controllers (root with a writable v1 hierarchy or a delegated v2 one), a memory hog is ended at the bound
 * and the container serves the next command; where it does not, asking for the bound is a typed refusal.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConfinedRoot, createConfinedRoot, isConfinementAvailable } from "../src/index.js";
import { run } from "./helpers.js";

const MEMORY_BOUND = 96 * 1024 * 1024;

/** The cgroup directory of `pid` for a controller, as the host sees it (v1 hierarchy or the v2 one). */
function cgroupOf(pid: number, controller: string): string | undefined {
  for (const line of readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n")) {
    const [, controllers, path] = line.split(":", 3);
    if (controllers === undefined || path === undefined) continue;
    if (controllers.split(",").includes(controller)) {
      for (const mount of [controller, controllers])
        if (existsSync(`/sys/fs/cgroup/${mount}${path}`)) return `/sys/fs/cgroup/${mount}${path}`;
    }
    if (controllers === "" && existsSync(`/sys/fs/cgroup${path}/cgroup.controllers`))
      return `/sys/fs/cgroup${path}`;
  }
  return undefined;
}

const available = isConfinementAvailable();

describe.runIf(available)("a confined container's memory and CPU cgroups", () => {
  let scratch: string;
  let root: ConfinedRoot | undefined;
  let refusal: unknown;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "cgroup-bounds-"));
    root = await createConfinedRoot({
      tree: join(scratch, "tree"),
      mounts: {},
      limits: { maxContainerMemoryBytes: MEMORY_BOUND, maxCpus: 0.5 },
    }).catch((error: unknown) => {
      refusal = error;
      return undefined;
    });
  });
  afterAll(async () => {
    root?.dispose();
    await root?.ended;
    await rm(scratch, { recursive: true, force: true });
  });

  it("bounds the container where the machine allows, and otherwise refuses with capability_unsupported", async () => {
    if (root === undefined) {
      expect(ManagedRuntimeError.hasCode(refusal, "capability_unsupported")).toBe(true);
      expect(String((refusal as Error).message)).toMatch(/needs a writable (memory|cpu) cgroup/);
      return;
    }
    expect(root.cgroups).toEqual({ pids: root.processCgroup, memory: true, cpu: true });
    const memory = cgroupOf(root.pid, "memory") as string;
    const limit = existsSync(`${memory}/memory.limit_in_bytes`)
      ? readFileSync(`${memory}/memory.limit_in_bytes`, "utf8")
      : readFileSync(`${memory}/memory.max`, "utf8");
    expect(Number(limit.trim())).toBe(MEMORY_BOUND);
    const cpu = cgroupOf(root.pid, "cpu") as string;
    const quota = existsSync(`${cpu}/cpu.cfs_quota_us`)
      ? readFileSync(`${cpu}/cpu.cfs_quota_us`, "utf8").trim()
      : readFileSync(`${cpu}/cpu.max`, "utf8").split(" ")[0];
    expect(Number(quota)).toBe(50_000);
  });

  it("ends a memory hog at the bound, and the container runs the next command", async () => {
    if (root === undefined) return;
    // 256 MiB touched in 16 MiB steps: far past the bound, well under the per-process address-space limit.
    const hog = root.spawn({
      command: "node",
      args: [
        "-e",
        "const a = []; for (let i = 0; i < 16; i++) { a.push(Buffer.alloc(16 * 1024 * 1024, 1)); process.stdout.write(i + ' '); } console.log('survived')",
      ],
      cwd: "/",
      env: { PATH: "/usr/bin:/bin" },
    });
    const result = await run(hog);
    // It ran and allocated (stdout to a pipe is synchronous), and was ended before it finished.
    expect(result.stdout).toMatch(/^0 1 /);
    expect(result.stdout).not.toContain("survived");
    expect(result.code).not.toBe(0);
    const next = await run(
      root.spawn({
        command: "sh",
        args: ["-c", "echo still-serving"],
        cwd: "/",
        env: { PATH: "/usr/bin:/bin" },
      }),
    );
    expect(next.stdout).toBe("still-serving\n");
  }, 60_000);
});
