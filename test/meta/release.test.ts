import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { REPO_ROOT, discoverMembers } from "./workspace.js";

/** The version every package's first release carries; unreleased packages sit at 0.0.0 until then. */
const FIRST_RELEASE = "0.1.0";
const UNRELEASED = "0.0.0";

interface PlannedRelease {
  readonly name: string;
  readonly type: string;
  readonly oldVersion: string;
  readonly newVersion: string;
}

const scratch = await mkdtemp(join(tmpdir(), "openma-release-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));
const members = await discoverMembers();

/** The release plan `changeset version` would apply now, as `changeset status --output` writes it (read-only). */
async function releasePlan(): Promise<readonly PlannedRelease[]> {
  const output = join(scratch, "status.json");
  await promisify(execFile)("pnpm", ["exec", "changeset", "status", `--output=${output}`], {
    cwd: REPO_ROOT,
    maxBuffer: 8 * 1024 * 1024,
  });
  const parsed = JSON.parse(await readFile(output, "utf8")) as { releases?: PlannedRelease[] };
  return parsed.releases ?? [];
}

it("leaves private packages (apps, repo tests) unversioned and untagged", async () => {
  const config = JSON.parse(
    await readFile(join(REPO_ROOT, ".changeset", "config.json"), "utf8"),
  ) as Record<string, unknown>;
  expect(config.privatePackages).toEqual({ version: false, tag: false });
});

it(`releases every unreleased package at ${FIRST_RELEASE} and changes no private package`, async () => {
  const plan = await releasePlan();
  const offences = members.flatMap((member) => {
    const release = plan.find((candidate) => candidate.name === member.name);
    const { version } = member.manifest;
    if (member.isPrivate)
      return release && release.newVersion !== release.oldVersion
        ? [`${member.name} is private but would become ${release.newVersion}`]
        : [];
    if (version !== UNRELEASED) return [];
    return release?.newVersion === FIRST_RELEASE
      ? []
      : [
          `${member.name} would be released as ${release?.newVersion ?? "nothing"}: start at ${UNRELEASED} and name it in .changeset/first-release.md as minor`,
        ];
  });
  expect(offences).toEqual([]);
}, 60_000);

it(`keeps unreleased packages at ${UNRELEASED} so the first \`changeset version\` yields ${FIRST_RELEASE}`, () => {
  const versions = members
    .filter((member) => !member.isPrivate)
    .map((member) => `${member.name}@${String(member.manifest.version)}`);
  expect(
    versions.filter(
      (entry) => !entry.endsWith(`@${UNRELEASED}`) && !entry.endsWith(`@${FIRST_RELEASE}`),
    ),
  ).toEqual([]);
});
