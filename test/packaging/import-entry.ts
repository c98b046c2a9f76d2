import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { isolatedEnv } from "./scratch-install.js";

const run = promisify(execFile);

/** What importing one entry point in a fresh Node process gave. */
export type ImportOutcome =
  | {
      readonly type: "imported";
      readonly exportNames: readonly string[];
      readonly workersBuiltinsStubbed: boolean;
    }
  | { readonly type: "failed"; readonly error: string };

const STUB_LOADER = new URL("./workers-builtins-stub.mjs", import.meta.url).href;

/**
 * Imports `specifier` from `projectDir` in a fresh Node ESM process (NODE_ENV=production) and returns
 * its export names. An entry that fails only because it imports a `cloudflare:` builtin targets the
 * Workers runtime; it is imported again with those builtins stubbed, which still proves every other
 * module it needs is installed and that it evaluates.
 */
export async function importEntry(projectDir: string, specifier: string): Promise<ImportOutcome> {
  const plain = await importOnce(projectDir, specifier, []);
  if (plain.type === "imported" || !plain.error.includes("'cloudflare:'")) return plain;
  const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(STUB_LOADER)});`;
  const stubbed = await importOnce(projectDir, specifier, ["--import", register]);
  return stubbed.type === "imported" ? { ...stubbed, workersBuiltinsStubbed: true } : stubbed;
}

async function importOnce(
  projectDir: string,
  specifier: string,
  nodeFlags: readonly string[],
): Promise<ImportOutcome> {
  const attributes = specifier.endsWith(".json") ? `, { with: { type: "json" } }` : "";
  const script = `const m = await import(${JSON.stringify(specifier)}${attributes}); process.stdout.write(JSON.stringify(Object.keys(m)));`;
  try {
    const { stdout } = await run(
      process.execPath,
      [...nodeFlags, "--input-type=module", "--eval", script],
      {
        cwd: projectDir,
        env: isolatedEnv(),
        timeout: 20_000,
      },
    );
    const names: unknown = JSON.parse(stdout);
    if (!Array.isArray(names) || !names.every((name) => typeof name === "string"))
      return { type: "failed", error: `unexpected output: ${stdout.slice(0, 200)}` };
    return { type: "imported", exportNames: names, workersBuiltinsStubbed: false };
  } catch (error) {
    const detail = error as { stderr?: string; message?: string };
    return {
      type: "failed",
      error: (detail.stderr || detail.message || String(error)).slice(0, 2_000),
    };
  }
}
