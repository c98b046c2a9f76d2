import { isBuiltin } from "node:module";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type SourceImport, scanSourceImports } from "./source-imports.js";
import {
  SCOPE,
  type WorkspaceMember,
  discoverMembers,
  repoPath,
  workspacePackageOf,
} from "./workspace.js";

// ── The rules, as data ──────────────────────────────────────────────────────────────────────────────
// Workspace packages each package under packages/* may import from production code and list in
// dependencies / peerDependencies / optionalDependencies. Production code is src/ and bench/: a benchmark
// follows the arrows of the code it measures, and one that needs more (the host, the local stack) lives in
// apps/benchmarks. Test files, helpers only tests reach, and devDependencies are exempt: a driver's tests
// may run the host and the conformance suite.
const CONTRACT = "runtime-resource-contract";
// The shared helpers sit directly above the contract; every package above them may use them.
const UTILS = "runtime-utils";
const SHARED = [
  "sandbox",
  "blob-store",
  "workspace-archive",
  "workspace-snapshots",
  "environment-packages",
];
const DRIVER_MAY = [CONTRACT, UTILS, ...SHARED, "managed-runtime-sandbox"];
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  // The contract is the bottom layer: zod only (see CONTRACT_THIRD_PARTY).
  [CONTRACT]: [],
  // Deadlines, bounded reads, hashing, stable JSON, shape checks, shared schemas, bearer and route
  // helpers: the contract (for its typed errors) and zod only (see UTILS_THIRD_PARTY).
  [UTILS]: [CONTRACT],
  sandbox: [CONTRACT, UTILS],
  "blob-store": [CONTRACT, UTILS],
  // Bubblewrap, cgroups, the egress proxy and mapped processes, beside the sandbox layer whose process
  // ports it fills; the local-subprocess provider over it is test-only (see TEST_ONLY_SUBPATHS).
  "local-confinement": [CONTRACT, UTILS, "sandbox"],
  "workspace-archive": [CONTRACT, UTILS],
  // Snapshot trees in a blob store, through any sandbox that can exec: beside the archive, never a driver.
  "workspace-snapshots": [CONTRACT, UTILS, "blob-store", "workspace-archive"],
  // The exec-only installer of Environment.config.packages, over the sandbox layer's exec port.
  "environment-packages": [CONTRACT, UTILS, "sandbox"],
  // Prices the usage ledger; apps register its ports. Nothing below the apps imports it.
  "cost-attribution": [CONTRACT, UTILS],
  // The shared composition every driver builds on.
  "managed-runtime-sandbox": [CONTRACT, UTILS, ...SHARED],
  // Drivers: never the host, the conformance suite or an app.
  "managed-runtime-cloudflare": DRIVER_MAY,
  "managed-runtime-cloudflare-bridge": DRIVER_MAY,
  "managed-runtime-host": [CONTRACT, UTILS],
  // The suite reads the sandbox layer's list of provider secret variables and its hosted-inference
  // projection, so it probes drivers for exactly the keys drivers are meant to strip; its `./testing`
  // reference driver runs on the local-subprocess provider of the confinement package. Both sit below the
  // host and import only the contract and the sandbox layer, so this adds no upward or driver edge. The
  // CLI opens the blob stores that `--blob-store` names (the blob store sits below the host too).
  "managed-runtime-conformance": [
    CONTRACT,
    UTILS,
    "managed-runtime-host",
    "sandbox",
    "local-confinement",
    "blob-store",
  ],
  "local-container": [CONTRACT, UTILS, "local-confinement"],
  // A stand-in for the Managed Agents Work API; the SDK is only a devDependency of its tests.
  "local-control-plane": [CONTRACT, UTILS],
  // Claims Work API items and runs them through the host; it takes the caller's SDK client (a peer
  // dependency) and uses the sandbox layer's hosted-inference projection for the harness env.
  "managed-environment-worker": [CONTRACT, UTILS, "managed-runtime-host", "sandbox"],
  // The Node deployment: composes the environment worker, the host and its SQL stores, and the blob stores
  // (a checkpoint store by URL); reads the shared composition's checkpoint-handle key from publications. It
  // loads the driver by module specifier through the host's loader and never imports or depends on one.
  "environment-worker-service": [
    CONTRACT,
    UTILS,
    "managed-runtime-host",
    "managed-environment-worker",
    "managed-runtime-sandbox",
    "blob-store",
  ],
  // The in-sandbox AMA worker bin: the official SDK only, no workspace package.
  "ama-worker": [],
};
// Apps compose drivers and the host; they may import any package under packages/*, never another app.

/** Subpaths meant for tests only, and the production folders (repo-relative) allowed to use them anyway. */
const TEST_ONLY_SUBPATHS: Readonly<Record<string, readonly string[]>> = {
  // The reference driver of the conformance `./testing` entry is the one published user.
  [`${SCOPE}local-confinement/local-subprocess`]: [
    "packages/managed-runtime-conformance/src/testing/",
  ],
};

/** Third-party packages the contract's production code may import; Node and Workers builtins are not allowed. */
const CONTRACT_THIRD_PARTY = ["zod"];

/** Third-party packages the shared helpers may import: zod, and the deterministic JSON writer `stableJson` wraps. */
const UTILS_THIRD_PARTY = ["safe-stable-stringify", "zod"];

/** Third-party packages a build bundles into its output, so a devDependency is enough. */
const BUNDLED: Readonly<Record<string, readonly string[]>> = {
  // tsup's `noExternal` and scripts/bundle-workers.mjs inline them into the Worker modules.
  "local-container": ["@cloudflare/containers", "@cloudflare/sandbox"],
};
// ─────────────────────────────────────────────────────────────────────────────────────────────────────

const members = await discoverMembers();
const imports = new Map(
  await Promise.all(
    members.map(async (member) => [member.name, await scanSourceImports(member)] as const),
  ),
);
const membersByName = new Map(members.map((member) => [member.name, member]));
const shortName = (member: WorkspaceMember): string =>
  member.path.slice(member.path.indexOf("/") + 1);
const where = (entry: SourceImport): string =>
  `${repoPath(entry.file)}:${entry.line} imports "${entry.specifier}"`;
const isRuntimeBuiltin = (specifier: string): boolean =>
  isBuiltin(specifier) || specifier.startsWith("cloudflare:");
const isBare = (specifier: string): boolean =>
  !specifier.startsWith(".") && !specifier.startsWith("/") && !isRuntimeBuiltin(specifier);
const thirdPartyName = (specifier: string): string =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");
const runtimeDependencies = (member: WorkspaceMember): Set<string> =>
  new Set(
    [
      member.manifest.dependencies,
      member.manifest.peerDependencies,
      member.manifest.optionalDependencies,
    ].flatMap((field) => Object.keys(field ?? {})),
  );

/** Why `member` may not depend on `target`, or null when it may. */
function forbidden(member: WorkspaceMember, target: WorkspaceMember): string | null {
  if (target.name === member.name) return null;
  if (target.kind === "app") return "nothing imports an app";
  if (member.kind === "app") return null;
  const allowed = MAY_IMPORT[shortName(member)] ?? [];
  return allowed.includes(shortName(target))
    ? null
    : `${shortName(member)} may import only [${allowed.join(", ")}]`;
}

it("has a rule for every package under packages/* and none for a package that is gone", () => {
  const packageNames = members.filter((member) => member.kind === "package").map(shortName);
  expect(
    packageNames.filter((name) => !(name in MAY_IMPORT)),
    "add these to MAY_IMPORT in test/meta/layering.test.ts",
  ).toEqual([]);
  expect(
    Object.keys(MAY_IMPORT).filter((name) => !packageNames.includes(name)),
    "stale MAY_IMPORT rules",
  ).toEqual([]);
  for (const targets of Object.values(MAY_IMPORT))
    expect(targets.filter((name) => !packageNames.includes(name))).toEqual([]);
});

it("finds imports in every member's sources", () => {
  const silent = members
    .filter((member) => (imports.get(member.name) ?? []).length === 0)
    .map((member) => member.path);
  expect(silent, "no import found: is src/ missing?").toEqual([]);
});

describe.each(members.map((member) => [member.path, member] as const))("%s", (_path, member) => {
  const entries = imports.get(member.name) ?? [];

  it("imports only the workspace packages its layer allows, and never an app", () => {
    const offences = entries.flatMap((entry) => {
      const name = workspacePackageOf(entry.specifier);
      const target = name === null ? undefined : membersByName.get(name);
      if (name !== null && target === undefined)
        return [`${where(entry)}: no workspace package is named ${name}`];
      if (target === undefined) return [];
      const reason = entry.testOnly && target.kind !== "app" ? null : forbidden(member, target);
      return reason ? [`${where(entry)}: ${reason}`] : [];
    });
    expect(offences).toEqual([]);
  });

  it("declares only allowed workspace packages as runtime dependencies, and never an app", () => {
    const offences = [...runtimeDependencies(member)].flatMap((name) => {
      const target = membersByName.get(name);
      if (target === undefined)
        return name.startsWith(SCOPE)
          ? [`${member.path}/package.json depends on unknown ${name}`]
          : [];
      const reason = forbidden(member, target);
      return reason ? [`${member.path}/package.json depends on ${name}: ${reason}`] : [];
    });
    const apps = Object.keys(member.manifest.devDependencies ?? {}).filter(
      (name) => membersByName.get(name)?.kind === "app" && name !== member.name,
    );
    expect([
      ...offences,
      ...apps.map(
        (name) => `${member.path}/package.json devDependency ${name}: nothing imports an app`,
      ),
    ]).toEqual([]);
  });

  it("never reaches into another folder of the repository by a relative path", () => {
    const offences = entries.filter((entry) => {
      if (!entry.specifier.startsWith(".")) return false;
      return relative(member.dir, resolve(entry.file, "..", entry.specifier)).startsWith("..");
    });
    expect(offences.map(where)).toEqual([]);
  });

  it("uses test-only subpaths only from tests", () => {
    const offences = entries.filter((entry) => {
      const allowedFolders = TEST_ONLY_SUBPATHS[entry.specifier];
      if (allowedFolders === undefined || entry.testOnly) return false;
      return !allowedFolders.some((folder) => repoPath(entry.file).startsWith(folder));
    });
    expect(offences.map((entry) => `${where(entry)}: test-only subpath`)).toEqual([]);
  });

  if (member.kind === "package") {
    it("declares every package its production code imports as a runtime dependency (a bench's as any dependency)", () => {
      const declared = runtimeDependencies(member);
      const bundled = BUNDLED[shortName(member)] ?? [];
      const declaredAnywhere = new Set([
        ...declared,
        ...Object.keys(member.manifest.devDependencies ?? {}),
      ]);
      const offences = entries.flatMap((entry) => {
        if (entry.testOnly || !isBare(entry.specifier)) return [];
        const name = workspacePackageOf(entry.specifier) ?? thirdPartyName(entry.specifier);
        if (name === member.name || declared.has(name)) return [];
        // Where a dependency is declared, not which one: benchmarks run in the repository, never from a tarball.
        if ((entry.bench || bundled.includes(name)) && declaredAnywhere.has(name)) return [];
        return [
          `${where(entry)}: ${name} is not in ${entry.bench ? "any dependency field" : "dependencies or peerDependencies"}`,
        ];
      });
      expect(offences).toEqual([]);
    });
  }
});

it("keeps the contract's production code on zod alone, without Node or Workers builtins", () => {
  const contract = members.find((member) => shortName(member) === CONTRACT);
  expect(contract, `packages/${CONTRACT} is missing`).toBeDefined();
  const entries = (imports.get(contract?.name ?? "") ?? []).filter(
    (entry) => !entry.testOnly && !entry.specifier.startsWith("."),
  );
  const offences = entries.filter(
    (entry) =>
      isRuntimeBuiltin(entry.specifier) ||
      !CONTRACT_THIRD_PARTY.includes(thirdPartyName(entry.specifier)),
  );
  expect(offences.map(where)).toEqual([]);
  expect(
    Object.keys(contract?.manifest.dependencies ?? {}),
    `${join("packages", CONTRACT)}/package.json dependencies`,
  ).toEqual(CONTRACT_THIRD_PARTY);
});

it("keeps the shared helpers on the contract, zod and safe-stable-stringify, with Node builtins only behind ./node", () => {
  const utils = members.find((member) => shortName(member) === UTILS);
  expect(utils, `packages/${UTILS} is missing`).toBeDefined();
  const entries = (imports.get(utils?.name ?? "") ?? []).filter(
    (entry) => !entry.testOnly && !entry.specifier.startsWith("."),
  );
  const offences = entries.filter((entry) => {
    if (isRuntimeBuiltin(entry.specifier))
      return !repoPath(entry.file).startsWith(`packages/${UTILS}/src/node/`);
    return (
      workspacePackageOf(entry.specifier) !== `${SCOPE}${CONTRACT}` &&
      !UTILS_THIRD_PARTY.includes(thirdPartyName(entry.specifier))
    );
  });
  expect(offences.map(where)).toEqual([]);
  expect(Object.keys(utils?.manifest.dependencies ?? {}).sort()).toEqual(
    [`${SCOPE}${CONTRACT}`, ...UTILS_THIRD_PARTY].sort(),
  );
});
