import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, discoverMembers } from "./workspace.js";

// The repository's turbo.json, run by the repository's turbo over a one-package workspace whose build is a
// script under scripts/ that reads wrangler.jsonc: an edit to any file a build reads must rebuild, never
// replay a cached dist/ built from the old file.
const TURBO = join(REPO_ROOT, "node_modules", ".bin", "turbo");
const run = promisify(execFile);
const turboJson = JSON.parse(await readFile(join(REPO_ROOT, "turbo.json"), "utf8")) as {
  globalDependencies?: string[];
  tasks: { build: { inputs: string[] } };
};

let root: string;
const pkg = (path: string) => join(root, "packages", "p", path);
const turbo = async (...args: string[]) => {
  const env = {
    ...process.env,
    TURBO_TELEMETRY_DISABLED: "1",
    DO_NOT_TRACK: "1",
    TURBO_NO_UPDATE_NOTIFIER: "1",
  };
  return (
    await run(TURBO, ["run", "build", "--cache-dir", join(root, ".turbo-cache"), ...args], {
      cwd: root,
      env,
      maxBuffer: 16 * 1024 * 1024,
    })
  ).stdout;
};
const buildHash = async () =>
  (
    JSON.parse(await turbo("--dry=json")) as { tasks: { taskId: string; hash: string }[] }
  ).tasks.find((task) => task.taskId === "p#build")!.hash;
const buildScript = (label: string) =>
  `import { mkdirSync, readFileSync, writeFileSync } from "node:fs";\nmkdirSync("dist", { recursive: true });\nwriteFileSync("dist/out.txt", "${label} " + readFileSync("wrangler.jsonc", "utf8").trim());\n`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "oma-turbo-inputs-"));
  await mkdir(pkg("scripts"), { recursive: true });
  await mkdir(pkg("src"), { recursive: true });
  await writeFile(join(root, "turbo.json"), JSON.stringify(turboJson));
  // npm workspaces: `npm run` writes no lockfile, which, as a global input, would change the hash between runs.
  const npm = (await run("npm", ["--version"])).stdout.trim();
  await writeFile(
    join(root, "package.json"),
    JSON.stringify({
      name: "turbo-inputs",
      private: true,
      packageManager: `npm@${npm}`,
      workspaces: ["packages/*"],
    }),
  );
  await writeFile(join(root, "tsconfig.base.json"), "{}\n");
  // The root build helpers every package's tsup config or Worker bundle script imports.
  await writeFile(join(root, "tsup.base.ts"), "export const base = {};\n");
  await mkdir(join(root, "scripts"), { recursive: true });
  await writeFile(
    join(root, "scripts", "worker-bundle-options.mjs"),
    "export const options = {};\n",
  );
  await writeFile(join(root, "scripts", "program-text.mjs"), "export const options = {};\n");
  await writeFile(
    pkg("package.json"),
    JSON.stringify({
      name: "p",
      version: "0.0.0",
      private: true,
      scripts: { build: "node scripts/build.mjs" },
    }),
  );
  await writeFile(pkg("src/index.ts"), "export {};\n");
  await writeFile(pkg("wrangler.jsonc"), '{ "name": "first" }\n');
  await writeFile(pkg("scripts/build.mjs"), buildScript("one"));
  // A git work tree like the repository's, so turbo hashes files the way it does there.
  await writeFile(join(root, ".gitignore"), ".turbo-cache/\n.turbo/\ndist/\n");
  const git = (...args: string[]) =>
    run(
      "git",
      ["-c", "user.email=turbo-inputs@example.invalid", "-c", "user.name=turbo-inputs", ...args],
      { cwd: root },
    );
  await git("init", "-q");
  await git("add", "-A");
  await git("commit", "-q", "-m", "workspace");
  await turbo("--output-logs=none");
}, 60_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("turbo build inputs", () => {
  it("rebuilds after an edit to a scripts/ file instead of replaying the cached dist/", async () => {
    expect(await readFile(pkg("dist/out.txt"), "utf8")).toBe('one { "name": "first" }');
    // Unchanged inputs replay the cache: the check below can fail.
    expect(await turbo("--output-logs=hash-only")).toMatch(/p:build: cache hit/);
    await writeFile(pkg("scripts/build.mjs"), buildScript("two"));
    expect(await turbo("--output-logs=hash-only")).toMatch(/p:build: cache miss/);
    expect(await readFile(pkg("dist/out.txt"), "utf8")).toBe('two { "name": "first" }');
  }, 120_000);

  it.each([
    ["wrangler.jsonc", () => writeFile(pkg("wrangler.jsonc"), '{ "name": "second" }\n')],
    [
      "tsconfig.base.json (a global dependency)",
      () =>
        writeFile(join(root, "tsconfig.base.json"), '{ "compilerOptions": { "strict": true } }\n'),
    ],
    [
      "tsup.base.ts (a global dependency)",
      () => writeFile(join(root, "tsup.base.ts"), "export const base = { minify: true };\n"),
    ],
    [
      "scripts/worker-bundle-options.mjs (a global dependency)",
      () =>
        writeFile(
          join(root, "scripts", "worker-bundle-options.mjs"),
          "export const options = { minify: true };\n",
        ),
    ],
    [
      "scripts/program-text.mjs (a global dependency)",
      () =>
        writeFile(
          join(root, "scripts", "program-text.mjs"),
          "export const options = { minify: true };\n",
        ),
    ],
    [
      "tsconfig.json",
      () => writeFile(pkg("tsconfig.json"), '{ "extends": "../../tsconfig.base.json" }\n'),
    ],
    ["tsup.config.ts", () => writeFile(pkg("tsup.config.ts"), "export default {};\n")],
    ["a src/ file", () => writeFile(pkg("src/index.ts"), "export const changed = true;\n")],
  ])(
    "changes the build's hash when %s changes",
    async (_file, change) => {
      const before = await buildHash();
      await change();
      expect(await buildHash()).not.toBe(before);
    },
    60_000,
  );

  it("leaves a README edit out of the build's hash", async () => {
    const before = await buildHash();
    await writeFile(pkg("README.md"), "# p\n");
    expect(await buildHash()).toBe(before);
  }, 60_000);
});

it("the inputs cover the files every workspace build script names", async () => {
  const inputs = turboJson.tasks.build.inputs;
  expect(turboJson.globalDependencies).toContain("tsconfig.base.json");
  const missing: string[] = [];
  for (const member of await discoverMembers()) {
    const build = (member.manifest.scripts as Record<string, string> | undefined)?.build ?? "";
    if (/\bscripts\//.test(build) && !inputs.includes("scripts/**"))
      missing.push(`${member.path}: scripts/**`);
    if (/\bwrangler\b/.test(build) && !inputs.includes("wrangler.jsonc"))
      missing.push(`${member.path}: wrangler.jsonc`);
    if (/\btsup\b/.test(build) && !inputs.includes("tsup.config.ts"))
      missing.push(`${member.path}: tsup.config.ts`);
  }
  expect(missing).toEqual([]);
});
