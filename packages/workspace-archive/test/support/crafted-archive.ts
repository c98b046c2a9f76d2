import { buffer } from "node:stream/consumers";
import tar, { type Header } from "tar-stream";

/** One member of a hand-made archive; `body` is written for files. */
export type CraftedEntry = Partial<Header> & {
  readonly name: string;
  readonly body?: string | Buffer;
};

/** Builds a tar archive with tar-stream exactly as described, hostile names included. */
export async function craftArchive(entries: readonly CraftedEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const collected = buffer(pack as unknown as NodeJS.ReadableStream);
  for (const { body, ...header } of entries) {
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (body === undefined)
        pack.entry({ mtime: new Date(1_700_000_000_000), ...header }, done).end(undefined);
      else pack.entry({ mtime: new Date(1_700_000_000_000), ...header }, body, done);
    });
  }
  pack.finalize();
  return collected;
}
