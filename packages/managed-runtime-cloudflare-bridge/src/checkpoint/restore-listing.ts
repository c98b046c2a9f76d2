import { createHash } from "node:crypto";
import { IntegrityError } from "@open-managed-agents/runtime-resource-contract";
import { type TarMember, createTarMemberReader } from "@open-managed-agents/workspace-archive";
import { type BufferedSpool, createBufferedSpool } from "./buffered-spool.js";

/**
 * The tree a restore must leave in `/workspace`, as the records `restore.sh verify` compares, NUL-terminated
 * and in archive order (the sandbox sorts both sides): `<path>//e<type> <mode> <size> <target>` for every entry
 * (size 0 but for files, mode `-` and the target for symlinks; `f`, `d`, `l` as find's `%y`) and
 * `<path>//h<sha256>` for every regular file. Built from the very tar bytes the restore sends, whatever handle
 * they came from: what is compared is what was sent, not a second reading of the checkpoint.
 */
export interface ExpectedListing {
  /**
   * `source` unchanged, each chunk also read by the listing (a copy: the sender may reuse its buffers). The
   * listing is complete once the whole source was read.
   */
  tap(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array>;
  /**
   * The listing, once the tapped source was read to its end. `reread` gives the archive again: read only when
   * it holds hard links, whose records are those of their targets (members read before them).
   */
  finish(reread: () => AsyncIterable<Uint8Array>): Promise<BufferedSpool>;
  dispose(): Promise<void>;
}

/** Chunks queued for the listing before the sender waits for it. */
const QUEUED_CHUNKS = 4;

/** The path a member restores to, relative to `/workspace`; "" for the root itself. */
export function memberPath(name: string): string {
  let path = name;
  while (path.startsWith("./")) path = path.slice(2);
  while (path.endsWith("/")) path = path.slice(0, -1);
  return path === "." ? "" : path;
}

const modeOf = (member: TarMember) => (member.mode & 0o7777).toString(8);

/** Starts a listing; its spool lies in `directory` (the driver's spool folder) and holds at most `maxBytes`. */
export async function createExpectedListing(options: {
  readonly maxBytes: number;
  readonly directory?: string;
}): Promise<ExpectedListing> {
  const spool = await createBufferedSpool(options);
  const queue: Buffer[] = [];
  let ended = false;
  let stopped = false;
  let wakeReader: (() => void) | null = null;
  let wakeSender: (() => void) | null = null;
  const wake = (which: "reader" | "sender") => {
    const wakeUp = which === "reader" ? wakeReader : wakeSender;
    if (which === "reader") wakeReader = null;
    else wakeSender = null;
    wakeUp?.();
  };
  const chunks = async function* (): AsyncGenerator<Buffer> {
    for (;;) {
      const next = queue.shift();
      if (next) {
        wake("sender");
        yield next;
      } else if (ended) return;
      else await new Promise<void>((resolve) => (wakeReader = resolve));
    }
  };
  const links: Array<{ readonly path: string; readonly target: string }> = [];
  // Folders by path: true once the archive holds the folder itself, false while only entries below it were
  // seen. tar makes a missing parent with 0777 less the umask (`restore.sh` sets 022), so such a folder is
  // expected as 755; a checkpoint this driver writes holds every folder.
  const folders = new Map<string, boolean>();
  const noteParents = (path: string) => {
    for (let at = path.lastIndexOf("/"); at > 0; at = path.lastIndexOf("/", at - 1)) {
      const parent = path.slice(0, at);
      if (folders.has(parent)) return;
      folders.set(parent, false);
    }
  };
  const write = async (text: string) => void (await spool.writeText(text));
  const fileRecords = (path: string, mode: string, size: number, sha256: string) =>
    `${path}//ef ${mode} ${size} \0${path}//h${sha256}\0`;

  const read = (async () => {
    const reader = createTarMemberReader(chunks());
    try {
      for (let member = await reader.next(); member; member = await reader.next()) {
        const path = memberPath(member.name);
        if (path === "") continue;
        noteParents(path);
        if (member.type === "directory") folders.set(path, true);
        if (member.type === "file") {
          const hash = createHash("sha256");
          for await (const piece of reader.bodyChunks()) hash.update(piece);
          await write(fileRecords(path, modeOf(member), member.size, hash.digest("hex")));
        } else if (member.type === "directory") await write(`${path}//ed ${modeOf(member)} 0 \0`);
        else if (member.type === "symlink")
          await write(`${path}//el - 0 ${member.linkname ?? ""}\0`);
        else if (member.type === "link")
          links.push({ path, target: memberPath(member.linkname ?? "") });
        // Anything else cannot be restored as it is: a record no tree has, so the check fails on it.
        else await write(`${path}//e${member.typeflag} unrestorable\0`);
      }
    } finally {
      stopped = true;
      queue.length = 0;
      wake("sender");
    }
  })();
  read.catch(() => undefined);

  /** The records of the hard links, from their targets' members in a second read of the archive. */
  const linkRecords = async (reread: () => AsyncIterable<Uint8Array>) => {
    const wanted = new Map<string, string | null>(links.map((link) => [link.target, null]));
    const reader = createTarMemberReader(reread());
    try {
      for (let member = await reader.next(); member; member = await reader.next()) {
        const path = memberPath(member.name);
        if (member.type !== "file" || !wanted.has(path)) continue;
        const hash = createHash("sha256");
        for await (const piece of reader.bodyChunks()) hash.update(piece);
        wanted.set(path, `${modeOf(member)} ${member.size} ${hash.digest("hex")}`);
      }
    } finally {
      await reader.close();
    }
    for (const link of links) {
      const target = wanted.get(link.target);
      if (!target)
        throw new IntegrityError({
          message: "a restore's hard link names no file of its archive",
          context: { path: link.path.slice(0, 256) },
        });
      const [mode = "", size = "", sha256 = ""] = target.split(" ");
      await write(fileRecords(link.path, mode, Number(size), sha256));
    }
  };

  return {
    async *tap(source) {
      try {
        for await (const chunk of source) {
          if (!stopped) {
            queue.push(Buffer.from(chunk));
            wake("reader");
            while (queue.length >= QUEUED_CHUNKS && !stopped)
              await new Promise<void>((resolve) => (wakeSender = resolve));
          }
          yield chunk;
        }
      } finally {
        ended = true;
        wake("reader");
      }
    },
    async finish(reread) {
      await read;
      if (links.length > 0) await linkRecords(reread);
      for (const [path, held] of folders) if (!held) await write(`${path}//ed 755 0 \0`);
      folders.clear();
      await spool.finish();
      return spool;
    },
    dispose: () => spool.dispose(),
  };
}
