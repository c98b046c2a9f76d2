/**
 * Host directories under /tmp while /tmp itself is a mount point: the local container server's
 * layout when its root directory lies under /tmp.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type PathMappingMode,
  type SpawnMappedOptions,
  createMountNamespace,
  detectPathMappingMode,
  mapPath,
  releaseMountNamespace,
  rewriteSandboxPaths,
  spawnMapped,
} from "../src/index.js";
import { settleMountNamespaces } from "../src/namespace-cache.js";
import { run } from "./helpers.js";

let root: string;
let mounts: Record<string, string>;
/** More mounts than the direct setup takes, so the staging setup runs. */
let largeMounts: Record<string, string>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "local-process-host-tmp-"));
  expect(root.startsWith("/tmp/")).toBe(true);
  mounts = {
    "/workspace": join(root, "workspace"),
    "/mnt/session/outputs": join(root, "outputs"),
    "/tmp": join(root, "tmp"),
    "/tmp/cache": join(root, "cache"),
  };
  await Promise.all(
    Object.values(mounts).map((directory) => mkdir(join(directory, "sub"), { recursive: true })),
  );
  largeMounts = { ...mounts };
  for (let index = 0; index < 5; index += 1)
    largeMounts[`/tmp/extra-${index}`] = join(root, `extra-${index}`);
  await Promise.all(
    Object.values(largeMounts).map((directory) =>
      mkdir(join(directory, "sub"), { recursive: true }),
    ),
  );
  await writeFile(join(root, "workspace", "input.txt"), "from the host\n");
  await writeFile(join(root, "cache", "hit.txt"), "cached\n");
});

afterAll(async () => {
  releaseMountNamespace();
  await rm(root, { recursive: true, force: true });
});

const SCRIPT =
  "cat /workspace/input.txt /tmp/cache/hit.txt && echo tmp > /tmp/written.txt && echo out > /mnt/session/outputs/written.txt && pwd";

async function expectMapped(
  spawn: (options: Omit<SpawnMappedOptions, "mounts">) => ReturnType<typeof spawnMapped>,
  mapping: PathMappingMode,
): Promise<void> {
  const result = await run(spawn({ command: "sh", args: ["-c", SCRIPT], cwd: "/tmp/sub" }));
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const cwd = mapping === "namespace" ? "/tmp/sub" : join(root, "tmp", "sub");
  expect(result.stdout).toBe(`from the host\ncached\n${cwd}\n`);
  expect(await readFile(join(root, "tmp", "written.txt"), "utf8")).toBe("tmp\n");
  expect(await readFile(join(root, "outputs", "written.txt"), "utf8")).toBe("out\n");
  await rm(join(root, "tmp", "written.txt"));
}

describe.runIf(detectPathMappingMode() === "namespace").each(["small", "large"])(
  "namespace mode with host directories under /tmp (%s table)",
  (size) => {
    const table = (): Record<string, string> => (size === "small" ? mounts : largeMounts);

    it("maps every directory with a namespace per command", async () => {
      await expectMapped(
        (options) =>
          spawnMapped({ ...options, mounts: table(), mapping: "namespace", reuseNamespace: false }),
        "namespace",
      );
    });

    it("maps every directory in the namespace spawnMapped keeps", async () => {
      await run(spawnMapped({ command: "true", mounts: table(), mapping: "namespace" }));
      await settleMountNamespaces();
      await expectMapped(
        (options) => spawnMapped({ ...options, mounts: table(), mapping: "namespace" }),
        "namespace",
      );
    });

    it("maps every directory in a namespace from createMountNamespace", async () => {
      const namespace = await createMountNamespace(table(), { mapping: "namespace" });
      try {
        await expectMapped((options) => namespace.spawn(options), "namespace");
      } finally {
        namespace.dispose();
      }
    });
  },
);

describe("rewrite mode with host directories under /tmp", () => {
  it("maps every directory once", async () => {
    await expectMapped(
      (options) => spawnMapped({ ...options, mounts, mapping: "rewrite" }),
      "rewrite",
    );
  });

  it("leaves host paths that are already mapped alone in arguments, environment and cwd", async () => {
    const hostSub = join(root, "workspace", "sub");
    const result = await run(
      spawnMapped({
        command: "sh",
        args: [
          "-c",
          'printf "%s|%s|%s|%s" "$1" "$HOME" "$STATE" "$(pwd)"',
          "sh",
          `${hostSub}/a.txt`,
        ],
        // A session's state read back from an earlier command holds host paths.
        env: { PATH: process.env.PATH, HOME: "/tmp/home", STATE: `${hostSub}:/workspace/b` },
        cwd: hostSub,
        mounts,
        mapping: "rewrite",
      }),
    );
    expect(result.stdout).toBe(
      `${hostSub}/a.txt|${join(root, "tmp", "home")}|${hostSub}:${join(root, "workspace")}/b|${hostSub}`,
    );
  });

  it("rewrites text in one pass", () => {
    const table = { "/workspace": "/tmp/r/ws", "/tmp": "/tmp/r/tmp" };
    expect(
      rewriteSandboxPaths("cd /workspace/x && ls /tmp /tmp/r/ws /tmp/r/tmp/y /tmp/other", table),
    ).toBe("cd /tmp/r/ws/x && ls /tmp/r/tmp /tmp/r/ws /tmp/r/tmp/y /tmp/r/tmp/other");
    // A mount point equal to another mount's host directory is still a mount point.
    expect(rewriteSandboxPaths("/a/x /b/y", { "/a": "/b", "/b": "/c" })).toBe("/b/x /c/y");
  });

  it("maps host paths to themselves in mapPath only for rewrite mode", () => {
    const table = { "/workspace": "/tmp/r/ws", "/tmp": "/tmp/r/tmp" };
    expect(mapPath("/tmp/r/ws/a", table, "/", { mode: "rewrite" })).toBe("/tmp/r/ws/a");
    expect(mapPath("/tmp/a", table, "/", { mode: "rewrite" })).toBe("/tmp/r/tmp/a");
    expect(mapPath("/tmp/r/ws/a", table)).toBe("/tmp/r/tmp/r/ws/a");
  });
});
