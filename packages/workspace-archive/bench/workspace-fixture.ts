import { randomFillSync } from "node:crypto";
import { mkdir, open, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Shape of the generated benchmark workspace. */
export interface FixtureShape {
  readonly smallFiles: number;
  readonly largeFiles: number;
  readonly largeFileBytes: number;
}

/** Writes `smallFiles` files of 100 B–8 KiB across 100 folders plus `largeFiles` random files. */
export async function writeFixture(root: string, shape: FixtureShape): Promise<number> {
  let total = 0;
  const block = Buffer.alloc(1024 * 1024);
  for (let index = 0; index < shape.smallFiles; index += 1) {
    const folder = join(root, "src", `module-${index % 100}`);
    if (index < 100) await mkdir(folder, { recursive: true });
    const size = 100 + ((index * 7919) % 8092);
    randomFillSync(block, 0, size);
    await writeFile(join(folder, `file-${index}.ts`), block.subarray(0, size));
    total += size;
  }
  await mkdir(join(root, "assets"), { recursive: true });
  for (let index = 0; index < shape.largeFiles; index += 1) {
    const handle = await open(join(root, "assets", `blob-${index}.bin`), "w");
    for (let written = 0; written < shape.largeFileBytes; written += block.length) {
      randomFillSync(block);
      await handle.write(block, 0, Math.min(block.length, shape.largeFileBytes - written));
    }
    await handle.close();
    total += shape.largeFileBytes;
  }
  return total;
}
