import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pruneExpression } from "../src/checkpoint/sandbox-scripts.js";
import { type WalkOutput, parallelWalk } from "../src/checkpoint/sandbox-walk.js";

// The walk is plain shell over GNU find, xargs and cut, the tools the sandbox runs it with; here it runs in
// /bin/sh on this machine against a tree deeper than the single find's levels, next to that single find.
const exec = promisify(execFile);
let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "oma-sandbox-walk-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A tree with entries from depth 1 to 7, awkward names, excluded folders at several depths, links and empty folders. */
async function buildTree(): Promise<void> {
  const names = ["plain", "with space", "line\nbreak", "-dash", "quote'd", "ünï"];
  for (const [index, name] of names.entries()) {
    const deep = join(
      root,
      "node_modules",
      ".pnpm",
      `pkg${index}`,
      "node_modules",
      name,
      "lib",
      "inner",
    );
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, `${name}.js`), `export const x = ${index};\n`);
    await writeFile(join(root, "node_modules", ".pnpm", `pkg${index}`, "package.json"), "{}\n");
    await mkdir(join(root, "src", name, "empty"), { recursive: true });
    await writeFile(join(root, "src", name, "index.ts"), `// ${index}\n`);
  }
  await writeFile(join(root, "top.txt"), "top\n");
  await mkdir(join(root, "a", "b", "c", "d", "e"), { recursive: true });
  await writeFile(join(root, "a", "b", "c", "d", "e", "f.txt"), "deep\n");
  await symlink("../../src", join(root, "a", "b", "c", "to-src"));
  await symlink("missing", join(root, "a", "dangling"));
  // Excluded: a bare name at depth 4 and deeper, a path at depth 3 (a folder the single find lists last), a path at depth 5.
  await mkdir(join(root, "a", "b", "cache", "x"), { recursive: true });
  await writeFile(join(root, "a", "b", "cache", "x", "skip"), "skip\n");
  await mkdir(join(root, "node_modules", ".pnpm", "pkg0", "node_modules", ".bin"), {
    recursive: true,
  });
  await writeFile(
    join(root, "node_modules", ".pnpm", "pkg0", "node_modules", ".bin", "skip"),
    "skip\n",
  );
  await mkdir(join(root, "a", "b", "c", "d", "build", "y"), { recursive: true });
  await writeFile(join(root, "a", "b", "c", "d", "build", "y", "skip"), "skip\n");
  await mkdir(join(root, ".scratch"));
}

const EXCLUDES = [".bin", "a/b/cache", "./a/b/c/d/build/"];
const prune = ["-path ./.scratch", ...EXCLUDES.map(pruneExpression)].join(" -o ");
const entries: WalkOutput = { file: "./.scratch/entries", relative: true };
const files: WalkOutput = { file: "./.scratch/files", relative: false };
const actions = (path: string, into: (output: WalkOutput) => string) =>
  `-fprintf ${into(entries)} '${path}//e%y %m %s\\0' , \\( -type f -fprint0 ${into(files)} \\)`;

async function sortedRecords(file: string): Promise<string[]> {
  const text = await readFile(join(root, file), "utf8");
  return text.split("\0").slice(0, -1).sort();
}

/** Runs one find and the parallel walk; answers both outputs' records, sorted. */
async function bothWalks(walkActions = actions) {
  const single = `find . -mindepth 1 \\( ${prune} \\) -prune -o \\( -fprintf ./.scratch/single-entries '%P//e%y %m %s\\0' , \\( -type f -fprint0 ./.scratch/single-files \\) \\)`;
  await exec("sh", ["-c", single], { cwd: root });
  await exec(
    "sh",
    [
      "-c",
      parallelWalk({
        prune,
        scratch: "./.scratch",
        outputs: [entries, files],
        actions: walkActions,
      }),
    ],
    { cwd: root },
  );
  return {
    single: {
      entries: await sortedRecords(".scratch/single-entries"),
      files: await sortedRecords(".scratch/single-files"),
    },
    parallel: {
      entries: await sortedRecords(".scratch/entries"),
      files: await sortedRecords(".scratch/files"),
    },
  };
}

describe("parallel walk", () => {
  it("writes exactly the records one find writes, over a tree deeper than its top levels", async () => {
    await buildTree();
    const { single, parallel } = await bothWalks();
    expect(single.entries.length).toBeGreaterThan(60);
    expect(
      single.entries.some((record) =>
        record.startsWith("node_modules/.pnpm/pkg2/node_modules/line\nbreak/lib/inner/"),
      ),
    ).toBe(true);
    expect(single.entries.some((record) => record.includes("skip"))).toBe(false);
    expect(single.files).toContain("./a/b/c/d/e/f.txt");
    expect(parallel).toEqual(single);
    // Only the joined outputs stay.
    const { stdout } = await exec("sh", ["-c", "ls -A .scratch"], { cwd: root });
    expect(stdout.split("\n").filter(Boolean).sort()).toEqual([
      "entries",
      "files",
      "single-entries",
      "single-files",
    ]);
  });

  it("leaves everything below the top three levels to the finds that run at once", async () => {
    await buildTree();
    const below: WalkOutput = { file: "./.scratch/below", relative: true };
    const marking = (path: "%P" | "%p", into: (output: WalkOutput) => string) =>
      `${actions(path, into)}${path === "%p" ? ` , -fprintf ${into(below)} '${path}\\0'` : ""}`;
    await exec(
      "sh",
      [
        "-c",
        parallelWalk({
          prune,
          scratch: "./.scratch",
          outputs: [entries, files, below],
          actions: marking,
        }),
      ],
      { cwd: root },
    );
    const deep = (await sortedRecords(".scratch/entries"))
      .map((record) => record.slice(0, record.indexOf("//e")))
      .filter((path) => path.split("/").length > 3)
      .sort();
    expect(deep.length).toBeGreaterThan(30);
    expect(await sortedRecords(".scratch/below")).toEqual(deep);
  });

  it("handles a tree no deeper than its top levels, and an empty one", async () => {
    await mkdir(join(root, ".scratch"));
    expect((await bothWalks()).parallel).toEqual({ entries: [], files: [] });
    await mkdir(join(root, "one", "two"), { recursive: true });
    await writeFile(join(root, "one", "two", "three"), "3\n");
    const { single, parallel } = await bothWalks();
    expect(single.entries.map((record) => record.slice(0, record.indexOf("//e")))).toEqual([
      "one",
      "one/two",
      "one/two/three",
    ]);
    expect(parallel).toEqual(single);
  });

  it("fails when a find below the top levels fails", async () => {
    await buildTree();
    const failing = (path: string, into: (output: WalkOutput) => string) =>
      path === "%p" ? "-no-such-test" : actions(path, into);
    await expect(
      exec(
        "sh",
        [
          "-c",
          parallelWalk({
            prune,
            scratch: "./.scratch",
            outputs: [entries, files],
            actions: failing,
          }),
        ],
        { cwd: root },
      ),
    ).rejects.toMatchObject({ code: 123 });
  });

  it("fails when the top find fails, running nothing after it", async () => {
    await buildTree();
    const failing = (path: string, into: (output: WalkOutput) => string) =>
      path === "%P" ? "-no-such-test" : actions(path, into);
    await expect(
      exec(
        "sh",
        [
          "-c",
          `${parallelWalk({ prune, scratch: "./.scratch", outputs: [entries, files], actions: failing })} && touch ./.scratch/after`,
        ],
        { cwd: root },
      ),
    ).rejects.toMatchObject({ code: 1 });
    const { stdout } = await exec("sh", ["-c", "ls -A .scratch"], { cwd: root });
    expect(stdout).not.toContain("after");
  });
});
