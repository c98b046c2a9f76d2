import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { codeBlocks, hasTable, readmeSections } from "./readme-sections.js";
import { type WorkspaceMember, discoverMembers } from "./workspace.js";

const REQUIRED_SCRIPTS = ["build", "typecheck", "test"];

/**
 * Export subpaths, per package, that still lack a leading `types` condition. The check fails as soon
 * as a listed entry gains one or goes away, so this list only ever shrinks.
 */
const KNOWN_UNTYPED_ENTRIES: Readonly<Record<string, readonly string[]>> = {
  // The esbuild-bundled bridge Worker has no declaration file yet; scripts/bundle-workers.mjs would need to emit one.
  "@open-managed-agents/local-container": ["./bridge-worker"],
};
const CODE_LANGUAGES = ["ts", "typescript", "tsx", "js", "javascript", "mjs", "jsx"];

const publishable = (await discoverMembers()).filter(
  (member) => member.kind === "package" && !member.isPrivate,
);
const exists = async (path: string): Promise<boolean> =>
  (await stat(path).catch(() => null)) !== null;
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** Every file path an exports entry points at, through nested conditions. */
function targetsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  return Object.values(record(value)).flatMap(targetsOf);
}

/** The exports map as `[subpath, entry]` pairs; a map of bare conditions is the root entry. */
function exportEntries(member: WorkspaceMember): [string, unknown][] {
  const map = member.manifest.exports;
  if (typeof map === "string") return [[".", map]];
  const entries = Object.entries(record(map));
  return entries.every(([key]) => !key.startsWith(".")) && entries.length > 0
    ? [[".", map]]
    : entries;
}

it("finds the publishable packages", () => {
  expect(publishable.length).toBeGreaterThan(0);
});

describe.each(publishable.map((member) => [member.path, member] as const))(
  "%s",
  (_path, member) => {
    const { manifest } = member;

    it("declares license, ESM, published files, public access and the build, typecheck and test scripts", () => {
      expect(typeof manifest.license === "string" && manifest.license !== "", "license").toBe(true);
      expect(manifest.type, "type").toBe("module");
      const files = Array.isArray(manifest.files) ? manifest.files : [];
      expect(
        files.some(
          (file) =>
            file === "dist" ||
            file === "dist/" ||
            (typeof file === "string" && file.startsWith("dist/")),
        ),
        "files includes dist",
      ).toBe(true);
      expect(record(manifest.publishConfig).access, "publishConfig.access").toBe("public");
      const scripts = record(manifest.scripts);
      expect(
        REQUIRED_SCRIPTS.filter(
          (script) => typeof scripts[script] !== "string" || scripts[script] === "",
        ),
        "missing scripts",
      ).toEqual([]);
    });

    it("has an exports map whose every entry puts `types` first", () => {
      const entries = exportEntries(member);
      expect(entries.length, "exports map").toBeGreaterThan(0);
      const known = KNOWN_UNTYPED_ENTRIES[member.name] ?? [];
      const offences = entries.flatMap(([subpath, entry]) => {
        if (subpath === "./package.json") return [];
        const first = Object.keys(record(entry))[0];
        if (first === "types")
          return known.includes(subpath)
            ? [`${subpath}: now typed, remove it from KNOWN_UNTYPED_ENTRIES`]
            : [];
        return known.includes(subpath)
          ? []
          : [
              `${subpath}: first condition is ${first ?? `a bare string (${String(entry)})`}, not types`,
            ];
      });
      const gone = known.filter((subpath) => !entries.some(([candidate]) => candidate === subpath));
      expect([
        ...offences,
        ...gone.map(
          (subpath) => `${subpath}: no longer exported, remove it from KNOWN_UNTYPED_ENTRIES`,
        ),
      ]).toEqual([]);
    });

    it("builds every file its exports map names, inside the published files", async () => {
      const files = (Array.isArray(manifest.files) ? manifest.files : []).filter(
        (file): file is string => typeof file === "string",
      );
      const offences: string[] = [];
      for (const [subpath, entry] of exportEntries(member)) {
        for (const target of targetsOf(entry)) {
          if (target.includes("*")) continue;
          if (!(await exists(join(member.dir, target))))
            offences.push(`${subpath}: ${target} does not exist (is the package built?)`);
          const relativeTarget = target.replace(/^\.\//, "");
          const published =
            relativeTarget === "package.json" ||
            files.some(
              (file) =>
                relativeTarget === file.replace(/\/$/, "") ||
                relativeTarget.startsWith(`${file.replace(/\/$/, "")}/`),
            );
          if (!published) offences.push(`${subpath}: ${target} is outside "files"`);
        }
      }
      expect(offences).toEqual([]);
    });

    describe("README.md", async () => {
      const readme = await readFile(join(member.dir, "README.md"), "utf8").catch(() => null);
      const sections = readmeSections(readme ?? "");
      const name = escapeRegExp(member.name);

      it("exists", () => {
        expect(readme, `${member.path}/README.md is missing`).not.toBeNull();
      });

      it("shows how to install the package", () => {
        expect(readme ?? "").toMatch(
          new RegExp(`(pnpm add|npm (install|i)|yarn add)\\b[^\\n]*${name}`),
        );
      });

      it("has a code example that imports the package", () => {
        const examples = codeBlocks(readme ?? "").filter((block) =>
          CODE_LANGUAGES.includes(block.language),
        );
        expect(
          examples.some((block) =>
            new RegExp(`(from\\s*|import\\s*\\(\\s*)["']${name}(/[^"']*)?["']`).test(block.code),
          ),
        ).toBe(true);
      });

      it("documents options in a table under an options heading", () => {
        const options = sections.filter((section) =>
          /\b(options?|configuration|settings)\b/i.test(section.heading),
        );
        expect(
          options.map((section) => section.heading),
          "no heading names options",
        ).not.toEqual([]);
        expect(
          options.some((section) => hasTable(section.body)),
          "no table under an options heading",
        ).toBe(true);
      });

      it("documents errors under an errors heading, naming error classes or codes", () => {
        // "Errors", "Failures", "What is refused", "Rejected input" all introduce the error documentation.
        const errors = sections.filter((section) =>
          /\b(errors?|failures?|refused|rejected|rejections?)\b/i.test(section.heading),
        );
        expect(
          errors.map((section) => section.heading),
          "no heading names errors",
        ).not.toEqual([]);
        expect(
          errors.some((section) => /`[A-Z]\w*Error`|`[a-z]+(_[a-z]+)+`/.test(section.body)),
          "the errors section names no error class or code",
        ).toBe(true);
      });
    });
  },
);
