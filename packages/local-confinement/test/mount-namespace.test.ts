import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type PathMappingMode,
  PATH_MAP_ENV,
  type SpawnMappedOptions,
  detectPathMappingMode,
  mapPath,
  rewriteSandboxPaths,
  spawnMapped as spawnMappedOf,
  toDuplexProcess,
} from "../src/index.js";
import { settleMountNamespaces } from "../src/namespace-cache.js";
import { isAlive, run, waitFor } from "./helpers.js";

let root: string;
let workspace: string;
let outputs: string;
let mounts: Record<string, string>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "local-process-test-"));
  workspace = join(root, "workspace");
  outputs = join(root, "outputs");
  await mkdir(workspace);
  await mkdir(outputs);
  await writeFile(join(workspace, "input.txt"), "from the host\n");
  mounts = { "/workspace": workspace, "/mnt/session/outputs": outputs };
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("mapPath", () => {
  it("maps the longest matching mount and resolves relative paths against the cwd", () => {
    const nested = { "/workspace": "/host/ws", "/workspace/cache": "/host/cache" };
    expect(mapPath("/workspace/a/b.txt", nested)).toBe("/host/ws/a/b.txt");
    expect(mapPath("/workspace/cache/x", nested)).toBe("/host/cache/x");
    expect(mapPath("notes.md", nested)).toBe("/host/ws/notes.md");
    expect(mapPath("/workspace", nested)).toBe("/host/ws");
  });

  it("does not treat a shared prefix as a mount and leaves unmounted paths alone", () => {
    expect(mapPath("/workspace-other/x", { "/workspace": "/host/ws" })).toBe("/workspace-other/x");
    expect(mapPath("/workspace/../etc/passwd", { "/workspace": "/host/ws" })).toBe("/etc/passwd");
  });
});

describe("rewriteSandboxPaths", () => {
  it("rewrites path starts only", () => {
    const rewritten = rewriteSandboxPaths(
      "cat /workspace/a; ls /workspace; echo http://x/workspace /workspaces",
      { "/workspace": "/h" },
    );
    expect(rewritten).toBe("cat /h/a; ls /h; echo http://x/workspace /workspaces");
  });
});

describe("detectPathMappingMode", () => {
  it("is cached and namespace only for root on Linux", () => {
    const mode = detectPathMappingMode();
    expect(detectPathMappingMode()).toBe(mode);
    if (process.getuid?.() !== 0) expect(mode).toBe("rewrite");
  });
});

interface Variant {
  readonly label: string;
  readonly mapping: PathMappingMode;
  readonly reuseNamespace?: boolean;
}

const namespaceVariants: Variant[] = [
  { label: "namespace, kept", mapping: "namespace" },
  { label: "namespace, one per command", mapping: "namespace", reuseNamespace: false },
];
const variants: Variant[] = [
  ...(detectPathMappingMode() === "namespace" ? namespaceVariants : []),
  { label: "rewrite", mapping: "rewrite" },
];

describe.each(variants)("spawnMapped ($label)", ({ label, mapping, reuseNamespace }) => {
  const spawnMapped = (options: SpawnMappedOptions) =>
    spawnMappedOf({ ...options, ...(reuseNamespace === undefined ? {} : { reuseNamespace }) });
  const fileTag = label.replace(/\W+/g, "-");

  beforeAll(async () => {
    // The first command of a table builds the namespace to keep; the tests then run inside it.
    await spawnMapped({ command: "true", mounts, mapping }).exited;
    await settleMountNamespaces();
  });

  it("lets the process use the literal sandbox paths", async () => {
    const result = await run(
      spawnMapped({
        command: "sh",
        args: [
          "-c",
          "cat /workspace/input.txt && echo written > /mnt/session/outputs/result.txt && cat input.txt",
        ],
        mounts,
        mapping,
      }),
    );
    expect(result).toMatchObject({ code: 0, stdout: "from the host\nfrom the host\n" });
    expect(await readFile(join(outputs, "result.txt"), "utf8")).toBe("written\n");
  });

  it("starts in the requested sandbox cwd", async () => {
    await mkdir(join(workspace, "sub"), { recursive: true });
    const result = await run(
      spawnMapped({ command: "sh", args: ["-c", "pwd"], mounts, cwd: "/workspace/sub", mapping }),
    );
    expect(result.stdout.trim()).toBe(
      mapping === "namespace" ? "/workspace/sub" : join(workspace, "sub"),
    );
  });

  it("passes the exit code through and reports a missing program as 127", async () => {
    expect(
      (await run(spawnMapped({ command: "sh", args: ["-c", "exit 7"], mounts, mapping }))).code,
    ).toBe(7);
    expect(
      (await run(spawnMapped({ command: "openma-no-such-program", mounts, mapping }))).code,
    ).toBe(127);
  });

  it("kills the whole process group", async () => {
    const pidFile = join(workspace, `grandchild-${fileTag}.pid`);
    const mapped = spawnMapped({
      command: "sh",
      args: ["-c", `sleep 30 & echo $! > ${pidFile}; wait`],
      mounts,
      mapping,
    });
    await waitFor(async () => (await readFile(pidFile, "utf8").catch(() => "")).trim() !== "");
    const grandchild = Number((await readFile(pidFile, "utf8")).trim());
    expect(await isAlive(grandchild)).toBe(true);
    mapped.kill("SIGKILL");
    expect((await mapped.exited).signal).toBe("SIGKILL");
    await waitFor(async () => !(await isAlive(grandchild)));
    expect(await isAlive(grandchild)).toBe(false);
  });

  it("kills members left in the group after the leader exited", async () => {
    const mapped = spawnMapped({
      command: "sh",
      args: ["-c", "sleep 30 >/dev/null 2>&1 & echo $!"],
      mounts,
      mapping,
    });
    const result = await run(mapped);
    expect(result.code).toBe(0);
    const background = Number(result.stdout.trim());
    expect(await isAlive(background)).toBe(true);
    mapped.kill("SIGKILL");
    await waitFor(async () => !(await isAlive(background)));
    // The group is empty now; signalling it again is a no-op, not an error.
    expect(() => mapped.kill("SIGKILL")).not.toThrow();
  });

  it("kills on abort", async () => {
    const controller = new AbortController();
    const mapped = spawnMapped({
      command: "sleep",
      args: ["30"],
      mounts,
      mapping,
      signal: controller.signal,
    });
    controller.abort();
    expect(await mapped.exited).toEqual({ code: null, signal: "SIGKILL" });
  });

  it("echoes stdin bytes as a duplex process", async () => {
    const duplex = toDuplexProcess(spawnMapped({ command: "cat", mounts, mapping }));
    const writer = duplex.stdin.getWriter();
    await writer.write(new Uint8Array([0, 1, 2, 255]));
    await writer.write(new TextEncoder().encode("hello"));
    await writer.close();
    const bytes = new Uint8Array(await new Response(duplex.stdout).arrayBuffer());
    expect([...bytes]).toEqual([0, 1, 2, 255, ...new TextEncoder().encode("hello")]);
    expect(await duplex.exited).toEqual({ code: 0, signal: null });
  });
});

describe("spawnMapped (rewrite only)", () => {
  const spawnMapped = spawnMappedOf;

  it("exports the mount table", async () => {
    const result = await run(
      spawnMapped({
        command: "sh",
        args: ["-c", `printf %s "$${PATH_MAP_ENV}"`],
        mounts,
        mapping: "rewrite",
      }),
    );
    expect(JSON.parse(result.stdout)).toEqual(mounts);
  });

  it("refuses a missing host directory and a relative mount point", () => {
    expect(() =>
      spawnMapped({ command: "true", mounts: { "/workspace": join(root, "missing") } }),
    ).toThrow(/does not exist/);
    expect(() => spawnMapped({ command: "true", mounts: { workspace } })).toThrow(/absolute/);
  });
});
