import { spawn } from "node:child_process";
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { shellQuote } from "@open-managed-agents/runtime-resource-contract";

/** GNU tar on the host, on the same tree, for reference. */
export interface HostTarReference {
  readonly archiveBytes: number;
  /** `tar -cf - | cat > /dev/null` (tar skips reading files when it writes straight to /dev/null). */
  readonly createSeconds: number;
  readonly extractSeconds: number;
}

function run(script: string): Promise<number> {
  const start = performance.now();
  const child = spawn("bash", ["-o", "pipefail", "-c", script], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0
        ? resolve((performance.now() - start) / 1000)
        : reject(new Error(`host tar failed (${code}): ${stderr.slice(0, 300)}`)),
    );
  });
}

/** Times GNU tar creating an archive of `treeDirectory` into a pipe, and extracting it into a new directory. */
export async function hostTarReference(
  treeDirectory: string,
  scratchDirectory: string,
): Promise<HostTarReference> {
  const archive = join(scratchDirectory, "reference.tar");
  const target = join(scratchDirectory, "reference-extract");
  await mkdir(target, { recursive: true });
  try {
    const createSeconds = await run(
      `tar -cf - -C ${shellQuote(treeDirectory)} . | cat > /dev/null`,
    );
    await run(`tar -cf ${shellQuote(archive)} -C ${shellQuote(treeDirectory)} .`);
    const extractSeconds = await run(`tar -xf ${shellQuote(archive)} -C ${shellQuote(target)}`);
    return { archiveBytes: (await stat(archive)).size, createSeconds, extractSeconds };
  } finally {
    await rm(archive, { force: true });
    await rm(target, { recursive: true, force: true });
  }
}

/** Writes a GNU tar of `treeDirectory` to `file` (the raw `/hydrate` baseline sends it in parts). */
export async function hostTarFile(treeDirectory: string, file: string): Promise<void> {
  await run(`tar -cf ${shellQuote(file)} -C ${shellQuote(treeDirectory)} .`);
}
