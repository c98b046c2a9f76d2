import type { BaseVisitor } from "../src/checkpoint/base-scan.js";
import type { ManifestEntry } from "../src/checkpoint/manifest.js";
import { compareKeys } from "../src/checkpoint/split-records.js";

/**
 * A visitor asking for `wanted` paths (in manifest order, as a delta merges its own): it collects the base's
 * entries at them and notes those the base lacks, each met once.
 */
export function wantedVisitor(wanted: Iterable<string>) {
  const targets = [...new Set(wanted)]
    .map((path) => Buffer.from(path))
    .sort((a, b) => compareKeys(a, 0, a.length, b, 0, b.length));
  let index = 0;
  const found = new Map<string, ManifestEntry>();
  const lacking: string[] = [];
  const visitor: BaseVisitor = {
    next: () => targets[index] ?? null,
    async take(entry) {
      const path = (targets[index++] as Buffer).toString();
      if (entry) found.set(path, entry);
      else lacking.push(path);
    },
  };
  return { visitor, found, lacking };
}
