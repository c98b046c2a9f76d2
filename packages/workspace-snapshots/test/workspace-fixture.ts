import { createHash } from "node:crypto";
import {
  chmod,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  readlink,
  rm,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A small deterministic generator (mulberry32), so a failing seed can be run again. */
export function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (max: number) => Math.floor(next() * max),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}
export type Random = ReturnType<typeof random>;

export async function temporaryFolder(name: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `oma-snapshots-${name}-`));
}

/**
 * Everything a restore must reproduce, by path: type, mode, mtime to the nanosecond, size, content hash,
 * symlink target, and which paths share a file (hard links).
 */
export async function describeTree(root: string): Promise<string[]> {
  const lines: string[] = [];
  const inodes = new Map<bigint, string>();
  const visit = async (dir: string, prefix: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const path = join(dir, name);
      const relative = prefix === "" ? name : `${prefix}/${name}`;
      const stat = await lstat(path, { bigint: true });
      const mode = (stat.mode & 0o7777n).toString(8);
      const mtime = stat.mtimeNs.toString();
      if (stat.isDirectory()) {
        lines.push(`${relative} d ${mode} ${mtime}`);
        await visit(path, relative);
      } else if (stat.isSymbolicLink()) {
        lines.push(`${relative} l ${mtime} -> ${await readlink(path)}`);
      } else {
        const hash = createHash("sha256")
          .update(await readFile(path))
          .digest("hex");
        let group = "";
        if (stat.nlink > 1n) {
          group = inodes.get(stat.ino) ?? relative;
          inodes.set(stat.ino, group);
        }
        lines.push(`${relative} f ${mode} ${mtime} ${stat.size} ${hash} ${stat.nlink} ${group}`);
      }
    }
  };
  await visit(root, "");
  return lines;
}

const NAMES = [
  "a",
  "b",
  "src",
  "lib",
  "x-y",
  "x",
  "ä",
  "with space",
  "tab\tname",
  "line\nbreak",
  "back\\slash",
  "z.txt",
  "0",
  "deep",
  // Names that sort before their folder's own listing record.
  ".dot",
  "-dash",
];
const FILE_MODES = [0o644, 0o600, 0o755, 0o700, 0o664, 0o444];
const DIR_MODES = [0o755, 0o700, 0o775, 0o1777];

function content(rng: Random): Buffer {
  const roll = rng.next();
  const size = roll < 0.1 ? 0 : roll < 0.9 ? rng.int(5000) : 260 * 1024 + rng.int(100_000);
  const bytes = Buffer.alloc(size);
  for (let at = 0; at < size; at += 1) bytes[at] = rng.int(256);
  return bytes;
}

/** Seconds with a nanosecond-precision-looking fraction (as a float, which utimes takes). */
const when = (rng: Random) => 1_600_000_000 + rng.int(100_000_000) + rng.int(1000) / 1000;

async function exists(path: string) {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** All files, folders and symlinks under `root`, relative. */
async function entries(
  root: string,
): Promise<{ files: string[]; dirs: string[]; links: string[] }> {
  const found = { files: [] as string[], dirs: [] as string[], links: [] as string[] };
  const visit = async (dir: string, prefix: string) => {
    for (const name of await readdir(dir)) {
      const relative = prefix === "" ? name : `${prefix}/${name}`;
      const stat = await lstat(join(dir, name));
      if (stat.isDirectory()) {
        found.dirs.push(relative);
        await visit(join(dir, name), relative);
      } else if (stat.isSymbolicLink()) found.links.push(relative);
      else found.files.push(relative);
    }
  };
  await visit(root, "");
  return found;
}

/** One random change to the tree: add, rewrite, touch back, chmod, delete, relink, replace a file by a folder. */
export async function mutate(root: string, rng: Random, steps: number): Promise<void> {
  for (let step = 0; step < steps; step += 1) {
    const { files, dirs, links } = await entries(root);
    const dir = rng.next() < 0.2 || dirs.length === 0 ? "" : rng.pick(dirs);
    const at = (name: string) => (dir === "" ? name : `${dir}/${name}`);
    const action = rng.int(10);
    const writable = async (path: string) => chmod(join(root, path), 0o755).catch(() => undefined);
    if (dir !== "") await writable(dir);
    if (action <= 2) {
      const path = at(rng.pick(NAMES));
      if (await exists(join(root, path))) continue;
      if (rng.next() < 0.3) await mkdir(join(root, path));
      else {
        await writeFile(join(root, path), content(rng));
        await chmod(join(root, path), rng.pick(FILE_MODES));
        await utimes(join(root, path), when(rng), when(rng));
      }
    } else if (action === 3 && files.length > 0) {
      // Same size, same mtime, other bytes: only the ctime says it changed.
      const path = rng.pick(files);
      const before = await lstat(join(root, path));
      await chmod(join(root, path), 0o644);
      const bytes = await readFile(join(root, path));
      if (bytes.length === 0) continue;
      const flip = rng.int(bytes.length);
      bytes[flip] = (bytes[flip] as number) ^ 0xff;
      await writeFile(join(root, path), bytes);
      await chmod(join(root, path), before.mode & 0o7777);
      await utimes(join(root, path), before.atime, before.mtime);
    } else if (action === 4 && files.length > 0) {
      const path = rng.pick(files);
      await chmod(join(root, path), 0o644);
      await writeFile(join(root, path), content(rng));
    } else if (action === 5 && files.length > 0) {
      await chmod(join(root, rng.pick(files)), rng.pick(FILE_MODES));
    } else if (action === 6 && (files.length > 0 || links.length > 0)) {
      const path = rng.pick([...files, ...links]);
      await rm(join(root, path));
    } else if (action === 7 && dirs.length > 0) {
      const path = rng.pick(dirs);
      await rm(join(root, path), { recursive: true, force: true }).catch(async () => {
        for (const inner of (await entries(join(root, path))).dirs)
          await writable(`${path}/${inner}`);
        await rm(join(root, path), { recursive: true, force: true });
      });
    } else if (action === 8) {
      const path = at(`link-${rng.int(5)}`);
      if (await exists(join(root, path))) await rm(join(root, path));
      await symlink(
        rng.pick(["../a", "src/x", "missing", files[0] ?? "nothing", "/etc/hosts"]),
        join(root, path),
      );
    } else if (action === 9 && files.length > 0) {
      const path = at(`hard-${rng.int(5)}`);
      if (await exists(join(root, path))) continue;
      await link(join(root, rng.pick(files)), join(root, path));
    }
    if (dir !== "" && (await exists(join(root, dir))))
      await chmod(join(root, dir), rng.pick(DIR_MODES));
    if (rng.next() < 0.5) {
      const { dirs: now } = await entries(root);
      if (now.length > 0) await utimes(join(root, rng.pick(now)), when(rng), when(rng));
    }
  }
}

/** A fresh random workspace. */
export async function populate(root: string, rng: Random): Promise<void> {
  await mkdir(join(root, "src/lib/deep"), { recursive: true });
  await mkdir(join(root, "empty"));
  await mutate(root, rng, 40);
}
