import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");
/** The entry hands the environment to config.ts, which parses it; nothing else reads a variable. */
const READERS = new Set(["index.ts", "config.ts"]);
// `env.X` and `this.env.X`, not a module path such as "../env.js".
const ENV_FIELD = /(?<![/\w])env\.[A-Za-z_]/;

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? sources(path) : Promise.resolve([path]);
    }),
  );
  return nested.flat().filter((file) => file.endsWith(".ts"));
}

describe("the Worker's environment", () => {
  it("is read only by the entry and config.ts; every other file gets settings and bindings", async () => {
    const readers: string[] = [];
    for (const file of await sources(SRC)) {
      const name = relative(SRC, file);
      const lines = (await readFile(file, "utf8")).split("\n");
      lines.forEach((line, index) => {
        if (ENV_FIELD.test(line) && !READERS.has(name)) readers.push(`src/${name}:${index + 1}`);
      });
    }
    expect(readers).toEqual([]);
  });
});
