import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { measureWorkerBundle } from "../../../../scripts/worker-bundle-size.mjs";
import { APP_DIR } from "./artefacts.js";

// The Worker example of the Cloudflare driver's README, with the wrangler config and Dockerfile printed
// beside it, deployed dry by wrangler. The files go into a folder inside this app, whose dependencies
// (the driver, @cloudflare/sandbox) are what the example imports.
const README = join(APP_DIR, "..", "..", "packages", "managed-runtime-cloudflare", "README.md");
const exampleDir = join(APP_DIR, `.readme-example-${process.pid}`);
afterAll(() => rm(exampleDir, { recursive: true, force: true }));

function block(markdown: string, language: string): string {
  // The info string may carry words after the language (`ts fragment`).
  const match = new RegExp(`\`\`\`${language}(?:[ \\t][^\\n]*)?\\n([\\s\\S]*?)\`\`\``).exec(
    markdown,
  );
  if (!match?.[1]) throw new Error(`the README has no ${language} block`);
  return match[1];
}

describe("the Cloudflare driver README's Worker example", () => {
  it("deploys dry with the wrangler.jsonc and Dockerfile beside it, each binding of its Env configured", async () => {
    const readme = await readFile(README, "utf8");
    const worker = block(readme, "ts");
    const config = block(readme, "jsonc");
    for (const binding of ["SANDBOX", "EGRESS_BINDINGS"]) {
      expect(worker).toContain(`readonly ${binding}:`);
      expect(config).toContain(`"${binding}"`);
    }
    await mkdir(exampleDir, { recursive: true });
    await writeFile(join(exampleDir, "worker.ts"), worker);
    await writeFile(join(exampleDir, "wrangler.jsonc"), config);
    await writeFile(join(exampleDir, "Dockerfile"), block(readme, "dockerfile"));
    const size = await measureWorkerBundle(exampleDir, {
      wrangler: join(APP_DIR, "node_modules", ".bin", "wrangler"),
    });
    expect(size.warnings).toEqual([]);
    expect(size.bytes).toBeGreaterThan(0);
  }, 180_000);
});
