import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pathToFileURL } from "node:url";
import { createBlobStoreFromUrl } from "@open-managed-agents/blob-store/url";
import { runCli } from "../src/cli/run-cli.js";

const rootDir = mkdtempSync(join(tmpdir(), "openma-conformance-cli-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

function writeJson(name: string, value: unknown): string {
  const path = join(rootDir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

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

const reference = ["--module", "./src/testing/index.ts", "--provider", "conformance-reference"];

describe("oma-conformance", () => {
  it("prints the table and exits 0 when the reference driver passes", async () => {
    const options = writeJson("reference.json", {
      rootDir: mkdtempSync(join(rootDir, "reference-")),
    });
    const cases = [
      "admission.credential-egress",
      "lifecycle.suspend",
      "lifecycle.fork-unsupported",
    ].flatMap((id) => ["--case", id]);
    const { status, stdout } = await cli(...reference, "--factory-options", options, ...cases);
    expect(status).toBe(0);
    expect(stdout).toMatch(/^case\s+capability\s+claimed\s+verified\s+result$/m);
    expect(stdout).toMatch(
      /^lifecycle\.suspend\s+sandbox\.suspendResume\s+yes\s+behaviour\s+pass$/m,
    );
    expect(stdout).toMatch(
      /^admission\.credential-egress\s+credentialEgress\.enforced\s+no\s+fail-closed\s+pass$/m,
    );
    expect(stdout).toMatch(
      /^persistence\.workspace\s+workspace persistence\s+yes\s+not-run\s+not-run$/m,
    );
    expect(stdout).toContain("PASSED: 3 pass, 0 fail, 21 not-run");
  });

  it("prints a machine-readable report with --json", async () => {
    const options = writeJson("reference-json.json", {
      rootDir: mkdtempSync(join(rootDir, "json-")),
    });
    const { status, stdout } = await cli(
      ...reference,
      "--factory-options",
      options,
      "--json",
      "--case",
      "lifecycle.reap-serialized",
    );
    expect(status).toBe(0);
    const report = JSON.parse(stdout) as {
      passed: boolean;
      provider: string;
      cases: { id: string; result: string }[];
    };
    expect(report).toMatchObject({ passed: true, provider: "conformance-reference" });
    expect(
      report.cases.filter((entry) => entry.result === "pass").map((entry) => entry.id),
    ).toEqual(["lifecycle.reap-serialized"]);
    expect(report.cases.filter((entry) => entry.result === "not-run")).toHaveLength(23);
  });

  it("opens --blob-store URLs and passes the stores as factory options", async () => {
    const options = writeJson("stores.json", { rootDir: mkdtempSync(join(rootDir, "stores-")) });
    const storeDir = mkdtempSync(join(rootDir, "blobs-"));
    const url = pathToFileURL(storeDir).href;
    const { status, stderr } = await cli(
      "--module",
      "./test/fixtures/store-module.ts",
      "--provider",
      "conformance-reference",
      "--factory-options",
      options,
      "--blob-store",
      `checkpointStore=${url}`,
      "--blob-store",
      `stores.outputs=${url}/outputs`,
      "--case",
      "admission.descriptor",
    );
    expect(stderr).toBe("");
    expect(status).toBe(0);
    expect(await (await (await createBlobStoreFromUrl(url)).get("probe/checkpoint"))?.text()).toBe(
      "checkpoint store reached the factory",
    );
    expect(
      await (await (await createBlobStoreFromUrl(`${url}/outputs`)).get("probe/outputs"))?.text(),
    ).toBe("output store reached the factory");
  });

  it("exits 2 for a malformed --blob-store flag or store URL, without echoing secrets", async () => {
    const malformed = await cli(...reference, "--blob-store", "checkpointStore");
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).toContain("--blob-store takes <option>=<url>");
    const unsupported = await cli(...reference, "--blob-store", "checkpointStore=ftp://host/x");
    expect(unsupported.status).toBe(2);
    expect(unsupported.stderr).toContain("unsupported blob store URL scheme ftp:");
    const credentials = await cli(
      ...reference,
      "--blob-store",
      "checkpointStore=s3://AKID:topsecret@bucket-name/x",
    );
    expect(credentials.status).toBe(2);
    expect(credentials.stderr).not.toContain("topsecret");
  });

  it("exits 1 and names the failure for a broken driver", async () => {
    const options = writeJson("broken.json", {
      fixture: "heartbeat-always-alive",
      rootDir: mkdtempSync(join(rootDir, "broken-")),
    });
    const { status, stdout } = await cli(
      "--module",
      "./test/fixtures/broken-module.ts",
      "--provider",
      "conformance-reference",
      "--factory-options",
      options,
      "--case",
      "lifecycle.heartbeat-lost",
    );
    expect(status).toBe(1);
    expect(stdout).toMatch(/^lifecycle\.heartbeat-lost\s+heartbeat\s+yes\s+behaviour\s+FAIL$/m);
    expect(stdout).toContain("heartbeat reports alive after the provider deleted the runtime");
  });

  it("exits 2 for usage and load errors", async () => {
    expect((await cli("--provider", "x")).status).toBe(2);
    expect((await cli("--bogus")).status).toBe(2);
    expect((await cli(...reference, "--case", "lifecycle.teleport")).stderr).toContain(
      "unknown case lifecycle.teleport",
    );
    const mismatch = await cli("--module", "./src/testing/index.ts", "--provider", "e2b");
    expect(mismatch).toMatchObject({ status: 2 });
    expect(mismatch.stderr).toContain("provider_mismatch");
    writeFileSync(join(rootDir, "broken.txt"), "{not json");
    expect(
      (await cli(...reference, "--factory-options", join(rootDir, "broken.txt"))).stderr,
    ).toContain("is not JSON");
    expect((await cli("--module", "./no/such/module.js", "--provider", "x")).stderr).toContain(
      "driver_load_failed",
    );
  });

  it("prints usage with --help", async () => {
    const { status, stdout } = await cli("--help");
    expect(status).toBe(0);
    expect(stdout).toContain("Usage: oma-conformance --module <specifier> --provider <id>");
  });
});
