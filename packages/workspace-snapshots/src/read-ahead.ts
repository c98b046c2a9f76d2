import type { Change } from "./change-stream.js";
import type { ReadTree, TreeStore } from "./stored-objects.js";

/** Changes read ahead of the walk: the window in which the old trees they lead into are found early. */
const CHANGES_AHEAD = 512;
/** Old trees read ahead of the walk and not yet taken by it: what a capture holds of them at most. */
const TREES_AHEAD = 16;

/** The sorted stream of changes a capture merges with the old trees, read up to a window ahead. */
export interface ChangeLookahead {
  peek(): Promise<Change | null>;
  take(): void;
  /** Names of `dir`'s children whose old trees the walk will read for the changes in the window. */
  childrenChanged(dir: string): Set<string>;
}

export function createChangeLookahead(
  source: AsyncIterator<Change>,
  limit = CHANGES_AHEAD,
): ChangeLookahead {
  let ahead: Change[] = [];
  let head = 0;
  let ended = false;
  let failure: unknown = null;
  let reading: Promise<void> | null = null;
  const fill = async () => {
    try {
      while (!ended && ahead.length - head < limit) {
        const next = await source.next();
        if (next.done) ended = true;
        else ahead.push(next.value);
      }
    } catch (error) {
      // Kept until the walk reaches the end of what was read: a stream cut short is never taken as its end.
      failure ??= error;
      ended = true;
    }
  };
  const readMore = () => {
    if (reading === null && !ended && ahead.length - head < limit)
      reading = fill().finally(() => {
        reading = null;
      });
    return reading ?? Promise.resolve();
  };
  return {
    async peek() {
      while (head === ahead.length) {
        if (failure !== null) throw failure;
        if (ended) return null;
        await readMore();
      }
      return ahead[head] as Change;
    },
    take() {
      head += 1;
      if (head >= limit) {
        ahead = ahead.slice(head);
        head = 0;
      }
      void readMore();
    },
    childrenChanged(dir) {
      const names = new Set<string>();
      const prefix = dir === "" ? "" : `${dir}/`;
      for (let index = head; index < ahead.length; index += 1) {
        const { path, entry } = ahead[index] as Change;
        if (!path.startsWith(prefix)) continue;
        const rest = path.slice(prefix.length);
        const slash = rest.indexOf("/");
        if (slash >= 0) names.add(rest.slice(0, slash));
        else if (entry?.type === "d") names.add(rest);
      }
      return names;
    },
  };
}

/** Paths in the order the walk visits them: a folder right before everything below it. */
function walkOrder(left: string, right: string): number {
  return Buffer.compare(Buffer.from(`${left}/`, "utf8"), Buffer.from(`${right}/`, "utf8"));
}

/**
 * The parent snapshot's trees as the walk opens them. Each tree read, by the walk or ahead of it, starts reads
 * of its child folders' trees that the changes in the window lead into, so the trees on changed paths are read
 * a few at a time instead of one after another. Every tree is checked against its hash as it is read.
 */
export function createOldTreeReader(trees: TreeStore, changes: ChangeLookahead) {
  const ahead = new Map<string, { readonly hash: string; readonly read: Promise<ReadTree> }>();
  // The folders the walk is in, root first: their later children enter the window as the walk goes on.
  const opened = new Map<string, ReadTree>();
  const readBelow = (dir: string, tree: ReadTree) => {
    // A chunked tree's children are found as the walk reads its chunks.
    if (tree.entries === null || ahead.size >= TREES_AHEAD) return;
    const names = changes.childrenChanged(dir);
    if (names.size === 0) return;
    for (const entry of tree.entries) {
      if (ahead.size >= TREES_AHEAD) return;
      if (entry.type !== "dir" || !names.has(entry.name)) continue;
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (!ahead.has(path) && !opened.has(path))
        ahead.set(path, { hash: entry.tree, read: load(path, entry.tree) });
    }
  };
  const load = (path: string, hash: string): Promise<ReadTree> => {
    const read = trees.read(hash).then((tree) => {
      readBelow(path, tree);
      return tree;
    });
    // A tree read ahead that the walk never takes fails nobody; one it takes fails the walk there.
    read.catch(() => undefined);
    return read;
  };
  return {
    /** The old tree `hash` of folder `path`, which the walk enters. */
    async open(path: string, hash: string): Promise<ReadTree> {
      // The walk has passed the paths before this one: trees read ahead for them are not needed.
      for (const other of ahead.keys()) if (walkOrder(other, path) < 0) ahead.delete(other);
      for (const dir of opened.keys())
        if (dir !== "" && !path.startsWith(`${dir}/`)) opened.delete(dir);
      const held = ahead.get(path);
      ahead.delete(path);
      const tree = await (held?.hash === hash ? held.read : load(path, hash));
      opened.set(path, tree);
      for (const [dir, openTree] of opened) readBelow(dir, openTree);
      return tree;
    },
  };
}
