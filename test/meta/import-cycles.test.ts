import { describe, expect, it } from "vitest";
import { resolveRelative, scanSourceImports } from "./source-imports.js";
import { discoverMembers, repoPath } from "./workspace.js";

// A circle of imports (type-only ones count: they tie the files' meanings together just the same) means no
// file in it can be read, changed or tested without all the others. Every member's src/ is one graph of
// relative imports; each strongly connected component larger than one file, or a file importing itself,
// is a circle.

/**
 * Circles that predate this check, each by its files (repo-relative, sorted). They are to be broken, not
 * added to: a new circle, a circle that grows, or an entry that no longer matches fails the test.
 */
const KNOWN_CIRCLES: readonly (readonly string[])[] = [
  [
    "packages/local-container/src/server/control-api-error.ts",
    "packages/local-container/src/server/control-api-responses.ts",
  ],
  [
    "packages/local-container/src/server/command-runner.ts",
    "packages/local-container/src/server/container-registry.ts",
    "packages/local-container/src/server/process-table.ts",
    "packages/local-container/src/server/session-shell.ts",
    "packages/local-container/src/server/sessions.ts",
  ],
  [
    "packages/managed-runtime-cloudflare-bridge/src/runtime/env-file.ts",
    "packages/managed-runtime-cloudflare-bridge/src/runtime/exec.ts",
    "packages/managed-runtime-cloudflare-bridge/src/runtime/files.ts",
  ],
  [
    "packages/runtime-resource-contract/src/checkpoint.ts",
    "packages/runtime-resource-contract/src/credential-egress.ts",
    "packages/runtime-resource-contract/src/fence.ts",
    "packages/runtime-resource-contract/src/orphan.ts",
    "packages/runtime-resource-contract/src/outputs.ts",
    "packages/runtime-resource-contract/src/sandbox-journal.ts",
    "packages/runtime-resource-contract/src/sandbox.ts",
    "packages/runtime-resource-contract/src/workspace.ts",
  ],
];

/** The circles among `edges`, each as its files sorted; Tarjan's algorithm, iterative. */
function findCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; next: number }[] = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter);
    counter += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; next: number };
      const targets = edges.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next] as string;
        frame.next += 1;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter);
          counter += 1;
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(target) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent)
        low.set(
          parent.node,
          Math.min(low.get(parent.node) as number, low.get(frame.node) as number),
        );
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || targets.includes(frame.node)) cycles.push(component.sort());
    }
  }
  return cycles;
}

describe("findCycles", () => {
  it("finds a circle, a self-import and nothing in a tree", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
      ["e", ["e"]],
      ["f", ["d"]],
    ]);
    expect(findCycles(graph)).toEqual([["a", "b", "c"], ["e"]]);
    expect(
      findCycles(
        new Map([
          ["x", ["y"]],
          ["y", []],
        ]),
      ),
    ).toEqual([]);
  });
});

describe("relative imports inside each member's src/", () => {
  it("form no circle but the known ones, and every known one is still there", async () => {
    const found: string[][] = [];
    for (const member of await discoverMembers()) {
      const entries = await scanSourceImports(member);
      const files = new Set(entries.map((entry) => entry.file));
      const edges = new Map<string, string[]>();
      for (const entry of entries) {
        const target = resolveRelative(entry.file, entry.specifier, files);
        const targets = edges.get(entry.file) ?? [];
        if (target !== null) targets.push(target);
        edges.set(entry.file, targets);
      }
      for (const cycle of findCycles(edges)) found.push(cycle.map(repoPath));
    }
    const key = (files: readonly string[]): string => files.join(" ⇄ ");
    const known = new Set(KNOWN_CIRCLES.map(key));
    const foundKeys = new Set(found.map(key));
    expect(
      found.map(key).filter((circle) => !known.has(circle)),
      "new import circles",
    ).toEqual([]);
    expect(
      [...known].filter((circle) => !foundKeys.has(circle)),
      "stale KNOWN_CIRCLES entries",
    ).toEqual([]);
  });
});
