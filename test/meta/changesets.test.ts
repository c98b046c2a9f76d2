import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { REPO_ROOT, discoverMembers } from "./workspace.js";

/** One `.changeset/*.md` file: the packages its frontmatter names and its summary. */
interface Changeset {
  readonly file: string;
  readonly releases: readonly { readonly name: string; readonly bump: string }[];
  readonly summary: string;
  /** Frontmatter lines that are not `"<package>": patch|minor|major`. */
  readonly malformed: readonly string[];
}

const CHANGESET_DIR = join(REPO_ROOT, ".changeset");
const RELEASE_LINE = /^(["']?)(@?[^"':\s]+)\1\s*:\s*(patch|minor|major)\s*$/;

function parseChangeset(file: string, text: string): Changeset {
  const match = /^---\r?\n([\s\S]*?)\r?\n?---\r?\n?([\s\S]*)$/.exec(text);
  if (!match)
    return { file, releases: [], summary: "", malformed: ["no frontmatter between --- lines"] };
  const lines = (match[1] ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const releases: { name: string; bump: string }[] = [];
  const malformed: string[] = [];
  for (const line of lines) {
    const release = RELEASE_LINE.exec(line);
    if (release) releases.push({ name: release[2] ?? "", bump: release[3] ?? "" });
    else malformed.push(line);
  }
  return { file, releases, summary: (match[2] ?? "").trim(), malformed };
}

const files = (await readdir(CHANGESET_DIR))
  .filter((name) => name.endsWith(".md") && name !== "README.md")
  .sort();
const changesets = await Promise.all(
  files.map(async (file) =>
    parseChangeset(file, await readFile(join(CHANGESET_DIR, file), "utf8")),
  ),
);
const members = await discoverMembers();
const publishable = members.filter((member) => member.kind === "package" && !member.isPrivate);

it("parses the frontmatter of every changeset", () => {
  expect(changesets.length).toBeGreaterThan(0);
  const offences = changesets.flatMap((changeset) => [
    ...changeset.malformed.map(
      (line) => `.changeset/${changeset.file}: not a "<package>": patch|minor|major line: ${line}`,
    ),
    ...(changeset.releases.length === 0 ? [`.changeset/${changeset.file}: names no package`] : []),
    ...(changeset.summary === ""
      ? [`.changeset/${changeset.file}: has no summary below the frontmatter`]
      : []),
  ]);
  expect(offences).toEqual([]);
});

it("names only publishable packages: no app, private or unknown package", () => {
  const offences = changesets.flatMap((changeset) =>
    changeset.releases.flatMap(({ name }) => {
      const member = members.find((candidate) => candidate.name === name);
      if (member === undefined) return [`.changeset/${changeset.file}: unknown package ${name}`];
      if (member.kind === "app")
        return [
          `.changeset/${changeset.file}: ${name} is an app (${member.path}); apps are never versioned`,
        ];
      if (member.isPrivate) return [`.changeset/${changeset.file}: ${name} is private`];
      return [];
    }),
  );
  expect(offences).toEqual([]);
});

it("has at least one changeset for every publishable package", () => {
  const named = new Set(
    changesets.flatMap((changeset) => changeset.releases.map((release) => release.name)),
  );
  const missing = publishable
    .filter((member) => !named.has(member.name))
    .map((member) => `${member.name} (${member.path})`);
  expect(missing, "add .changeset/<package-dir-name>.md").toEqual([]);
});
