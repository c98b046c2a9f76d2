import { execFile } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL("..", import.meta.url));

it("runs the README's example against the built package", async () => {
  const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
  const example = /## Example\n[\s\S]*?```ts[^\n]*\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(example).toBeDefined();
  // Inside the package directory, so `@open-managed-agents/local-control-plane` resolves to this package.
  const script = fileURLToPath(new URL("./.readme-example.mjs", import.meta.url));
  await writeFile(script, example!);
  try {
    const { stdout } = await run(process.execPath, [script], { cwd: packageDir, timeout: 60_000 });
    const entries = JSON.parse(stdout) as [
      string,
      { content: { text: string }[]; is_error: boolean },
    ][];
    expect(entries.map(([name, result]) => [name, result.is_error])).toEqual([
      ["bash", false],
      ["read", false],
    ]);
    expect(entries[1]![1].content[0]!.text).toBe("hello\n");
  } finally {
    await rm(script, { force: true });
  }
});
