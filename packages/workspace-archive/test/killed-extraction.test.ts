import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { extractArchive } from "../src/index.js";
import { craftArchive } from "./support/crafted-archive.js";
import { tempDir } from "./support/temp-dir.js";

const CHILD = fileURLToPath(new URL("./support/extract-child.mjs", import.meta.url));

/** Starts a child that extracts `archive` into `destination` and stalls halfway; resolves once it stalled. */
async function stalledChild(archive: string, destination: string) {
  const child = spawn(process.execPath, [CHILD, archive, destination], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.setEncoding("utf8");
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: string) => {
      output += chunk;
      if (output.includes("stalled")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`extract child exited early with ${code}`)));
  });
  return child;
}

/** A process id that is certainly not running: one that just exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await once(child, "exit");
  return child.pid as number;
}

describe("extractArchive killed mid-way", () => {
  it("leaves staging a later run finds and removes, and the destination untouched", async () => {
    const base = await tempDir("killed");
    const destination = join(base, "ws");
    await mkdir(destination);
    await writeFile(join(destination, "before.txt"), "before");
    const entries = Array.from({ length: 64 }, (_, index) => ({
      name: `./f${index}.txt`,
      body: `${index}`.repeat(4096),
    }));
    const archivePath = join(base, "archive.tar");
    await writeFile(archivePath, await craftArchive(entries));

    const child = await stalledChild(archivePath, destination);
    child.kill("SIGKILL");
    await once(child, "exit");
    // The kill really happened mid-extract: a staging folder is left, the destination is as it was.
    expect((await readdir(base)).filter((name) => name.includes(".oma-staging-"))).toHaveLength(1);
    expect(await readdir(destination)).toEqual(["before.txt"]);

    await extractArchive({ file: archivePath }, destination);
    expect((await readdir(base)).sort()).toEqual(["archive.tar", "ws"]);
    expect((await readdir(destination)).length).toBe(64);
  }, 60_000);

  it("moves a previous tree parked by a killed replace back when the destination is missing, and leaves live runs alone", async () => {
    const base = await tempDir("parked");
    const destination = join(base, "ws");
    const pid = await deadPid();
    const parked = join(base, `.ws.oma-previous-${pid}-abc123`);
    await mkdir(parked);
    await writeFile(join(parked, "kept.txt"), "kept");
    const live = join(base, `.ws.oma-staging-${process.pid}-Zz9Yy8`);
    await mkdir(live);
    const otherDestination = join(base, `.other.oma-staging-${pid}-Qq1Ww2`);
    await mkdir(otherDestination);

    await extractArchive(await craftArchive([{ name: "./new.txt", body: "new" }]), destination, {
      mode: "merge",
    });
    expect((await readdir(destination)).sort()).toEqual(["kept.txt", "new.txt"]);
    expect(await readFile(join(destination, "kept.txt"), "utf8")).toBe("kept");
    expect((await readdir(base)).sort()).toEqual(
      [`.other.oma-staging-${pid}-Qq1Ww2`, `.ws.oma-staging-${process.pid}-Zz9Yy8`, "ws"].sort(),
    );
  }, 60_000);
});
