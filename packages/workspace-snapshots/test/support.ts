import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { expect } from "vitest";
import {
  type SnapshotRef,
  type SnapshotSandbox,
  type WorkspaceSnapshots,
  createWorkspaceSnapshots,
} from "../src/index.js";
import { describeTree, temporaryFolder } from "./workspace-fixture.js";

/**
 * A "sandbox" on this machine: its own workspace, listing cache and scratch folders under one temporary folder,
 * and the snapshot settings that point at them. Two of these over one store stand for two sandboxes.
 */
export async function localPlace(
  store: BlobStore,
  name: string,
  extra: { excludes?: string[]; compression?: "auto" | "gzip" | "off" } = {},
) {
  const root = await temporaryFolder(name);
  const workspace = join(root, "workspace");
  const { mkdir } = await import("node:fs/promises");
  await mkdir(workspace);
  await mkdir(join(root, "scratch"));
  const snapshots: WorkspaceSnapshots = createWorkspaceSnapshots({
    store,
    workspace,
    cacheDirectory: join(root, "cache"),
    scratchDirectory: join(root, "scratch"),
    spoolDirectory: root,
    partBytes: 64 * 1024,
    ...extra,
  });
  return {
    root,
    workspace,
    snapshots, // rm(1), since a test may leave a path longer than one call may name.
    dispose: async () => void (await promisify(execFile)("rm", ["-rf", root])),
  };
}

type Place = Awaited<ReturnType<typeof localPlace>>;

/** Checkpoints `source` (session "s") on top of `parent` and restores that into `target`: the trees must match. */
export async function expectRoundTrip(
  source: Place,
  target: Place,
  sandbox: SnapshotSandbox,
  parent: string,
): Promise<SnapshotRef> {
  const tree = await describeTree(source.workspace);
  const snapshot = await source.snapshots.checkpoint({ sandbox, sessionId: "s" });
  expect(snapshot.parent).toBe(parent);
  await target.snapshots.restore({ sandbox, sessionId: "s", id: snapshot.id });
  expect(await describeTree(target.workspace)).toEqual(tree);
  return snapshot;
}
