import { randomBytes } from "node:crypto";
import { chmod, lutimes, mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Mulberry32: a small seeded PRNG, so every failing seed can be replayed. */
export function createRandom(seed: number): {
  next(): number;
  int(max: number): number;
  pick<T>(items: readonly T[]): T;
} {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (max) => Math.floor(next() * max),
    pick: (items) => items[Math.floor(next() * items.length)] as never,
  };
}

const NAMES = [
  "a",
  "b.txt",
  "with space",
  "ünïcödé",
  "日本語",
  "emoji 🎉",
  "-dash",
  "'quote'",
  "x".repeat(120),
  "deep name.md",
];
const FILE_MODES = [0o644, 0o755, 0o600] as const;
const DIR_MODES = [0o755, 0o700, 0o750] as const;

/** Shape of a generated tree, for reporting. */
export interface RandomTree {
  readonly files: number;
  readonly largestFile: number;
}

/**
 * Writes a random tree below `root`: nested folders (some empty), files from empty to `bigFileBytes`,
 * unicode, space and long names, relative symlinks (some dangling) and the usual modes and mtimes.
 */
export async function writeRandomTree(
  root: string,
  seed: number,
  bigFileBytes: number,
): Promise<RandomTree> {
  const random = createRandom(seed);
  const directories: string[] = [""];
  const files: string[] = [];
  let largestFile = 0;
  const count = 8 + random.int(25);
  for (let index = 0; index < count; index += 1) {
    const parent = random.pick(directories);
    const name = `${random.pick(NAMES)}${index}`;
    const path = parent === "" ? name : `${parent}/${name}`;
    const roll = random.next();
    if (roll < 0.2 && parent.split("/").length < 4) {
      await mkdir(join(root, path));
      directories.push(path);
    } else if (roll < 0.32 && files.length > 0) {
      const target = random.pick(files);
      const depth = parent === "" ? 0 : parent.split("/").length;
      await symlink(
        random.next() < 0.8 ? `${"../".repeat(depth)}${target}` : "missing-target",
        join(root, path),
      );
      await lutimes(join(root, path), 1_600_000_000, 1_600_000_000);
    } else {
      const size =
        roll > 0.95 ? bigFileBytes - random.int(1000) : roll > 0.85 ? 0 : random.int(6000);
      largestFile = Math.max(largestFile, size);
      await writeFile(join(root, path), randomBytes(size));
      await chmod(join(root, path), random.pick(FILE_MODES));
      files.push(path);
    }
  }
  for (const path of files) {
    const mtime = 1_000_000_000 + random.int(900_000_000);
    await utimes(join(root, path), mtime, mtime);
  }
  for (const path of directories.slice(1).reverse()) {
    await chmod(join(root, path), random.pick(DIR_MODES));
    await utimes(join(root, path), 1_500_000_000, 1_500_000_000);
  }
  return { files: files.length, largestFile };
}
