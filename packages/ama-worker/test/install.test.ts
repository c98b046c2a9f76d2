import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// The built package (the test task builds first): the bin file exists only in dist.
const distIndex = new URL("../dist/index.js", import.meta.url).href;
const {
  AMA_WORKER_INSTALL_ROOT,
  amaWorkerBinPath,
  defaultAmaWorkerBinDirectory,
  installAmaWorkerBin,
} = (await import(distIndex)) as typeof import("../src/install.js");
const directory = await mkdtemp(join(tmpdir(), "oma-ama-worker-install-"));
afterAll(() => rm(directory, { recursive: true, force: true }));

const sha256 = async (path: string): Promise<string> =>
  createHash("sha256")
    .update(await readFile(path))
    .digest("hex");

describe("installAmaWorkerBin", () => {
  it("installs into a directory of this build's own, named by the bin's sha256, and shares it unchanged", async () => {
    const shipped = await sha256(amaWorkerBinPath());
    const bin = await installAmaWorkerBin();
    expect(dirname(bin)).toBe(join(AMA_WORKER_INSTALL_ROOT, shipped));
    expect(dirname(bin)).toBe(await defaultAmaWorkerBinDirectory());
    expect(await sha256(bin)).toBe(shipped);
    // A second install of the same build (another process) keeps the very file a running sandbox may use.
    const before = await stat(bin);
    expect(await installAmaWorkerBin()).toBe(bin);
    const after = await stat(bin);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it("replaces what it finds in a named directory unless it is this build's bin, executable", async () => {
    const target = join(directory, "oma-ama-worker");
    await writeFile(target, "#!/bin/sh\necho another build\n", { mode: 0o755 });
    expect(await installAmaWorkerBin(directory)).toBe(target);
    expect(await sha256(target)).toBe(await sha256(amaWorkerBinPath()));
    // The right bytes without the execute bits are installed again.
    await rm(target);
    await writeFile(target, await readFile(amaWorkerBinPath()), { mode: 0o644 });
    expect((await stat(target)).mode & 0o111).toBe(0);
    await installAmaWorkerBin(directory);
    expect((await stat(target)).mode & 0o555).toBe(0o555);
  });
});
