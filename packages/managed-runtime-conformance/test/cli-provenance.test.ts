import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/run-cli.js";

const rootDir = mkdtempSync(join(tmpdir(), "openma-conformance-provenance-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

async function cli(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const status = await runCli(argv, {
    cwd: process.cwd(),
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    importModule: (url) => import(/* @vite-ignore */ url),
  });
  return { status, stdout, stderr };
}

describe("oma-conformance: contract revision and catalog provenance", () => {
  it("--catalog marks each row derived (naming the driver package) or declared and unverified", async () => {
    const { status, stdout } = await cli("--catalog");
    expect(status).toBe(0);
    expect(stdout).toMatch(/^provider\s+lanes\s+workspace\s+outputs\s+row source$/m);
    expect(stdout).toMatch(
      /^cloudflare-bridge\s+ama_worker\s+checkpoint_restore\s+final_collect\s+derived from @open-managed-agents\/managed-runtime-cloudflare-bridge, checked by its tests$/m,
    );
    expect(stdout).toMatch(
      /^e2b\s+.*declared from provider documentation, UNVERIFIED \(https:\/\/e2b\.dev\/docs\)$/m,
    );
    expect(stdout).toMatch(/^boxrun\s+.*declared from provider documentation, UNVERIFIED$/m);
    expect(stdout).toContain(
      "2 derived and checked against a driver in this repository, 10 declared and unverified",
    );
  });

  it("--catalog --json prints the rows with their provenance", async () => {
    const { status, stdout } = await cli("--catalog", "--json");
    expect(status).toBe(0);
    const rows = JSON.parse(stdout) as { id: string; provenance: { source: string } }[];
    expect(rows.find((row) => row.id === "cloudflare")?.provenance).toEqual({
      source: "derived",
      driverPackage: "@open-managed-agents/managed-runtime-cloudflare",
    });
    expect(rows.find((row) => row.id === "modal")?.provenance.source).toBe("declared");
  });

  it("the report names the driver's contract revision and says the reference driver has no catalog row", async () => {
    const options = join(rootDir, "reference.json");
    writeFileSync(options, JSON.stringify({ rootDir: mkdtempSync(join(rootDir, "reference-")) }));
    const text = await cli(
      "--module",
      "./src/testing/index.ts",
      "--provider",
      "conformance-reference",
      "--factory-options",
      options,
      "--case",
      "admission.descriptor",
    );
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(
      /^\.\/src\/testing\/index\.ts: conformance-reference 1\.0\.0 \(in_process\), contract specification v1$/m,
    );
    expect(text.stdout).toContain("catalog row: none (the catalog.row case is not claimed)");
    const json = await cli(
      "--module",
      "./src/testing/index.ts",
      "--provider",
      "conformance-reference",
      "--factory-options",
      options,
      "--case",
      "admission.descriptor",
      "--json",
    );
    expect(JSON.parse(json.stdout)).toMatchObject({ specificationVersion: "v1", catalogRow: null });
  });
});
