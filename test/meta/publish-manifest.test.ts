import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, discoverMembers, listFiles, repoPath } from "./workspace.js";

/** Where the project lives; every published manifest points here. */
const REPOSITORY = "https://github.com/open-managed-agents/open-managed-agents";
const NODE_ENGINE = ">=20.3";
/** `@cloudflare/sandbox` ranges stay inside one minor line: the container image tag must equal the SDK version. */
const SANDBOX_SDK_LINE = /^~0\.12\.\d+$/;
/** A range a consumer can satisfy with another version: caret, tilde, or a comparator. */
const RANGE = /^(\^|~|>=)\d/;

const members = await discoverMembers();
const publishable = members.filter((member) => member.kind === "package" && !member.isPrivate);
const rootLicense = await readFile(join(REPO_ROOT, "LICENSE"), "utf8");
const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

it("ships the Apache-2.0 text as LICENSE at the root", () => {
  expect(rootLicense).toContain("Apache License");
  expect(rootLicense).toContain("Version 2.0, January 2004");
  expect(rootLicense).toContain("END OF TERMS AND CONDITIONS");
});

describe.each(publishable.map((member) => [member.path, member] as const))(
  "%s",
  (_path, member) => {
    const { manifest } = member;

    it("publishes the root LICENSE text and says Apache-2.0", async () => {
      expect(manifest.license).toBe("Apache-2.0");
      const files = Array.isArray(manifest.files) ? manifest.files : [];
      expect(files, `${member.path}/package.json "files" lists LICENSE`).toContain("LICENSE");
      const license = await readFile(join(member.dir, "LICENSE"), "utf8").catch(() => null);
      expect(license === rootLicense, `${member.path}/LICENSE is a copy of the root LICENSE`).toBe(
        true,
      );
    });

    it("points repository, homepage and bugs at the project, with its directory", () => {
      expect(manifest.repository).toEqual({
        type: "git",
        url: `git+${REPOSITORY}.git`,
        directory: member.path,
      });
      expect(manifest.homepage).toBe(`${REPOSITORY}/tree/main/${member.path}#readme`);
      expect(manifest.bugs).toEqual({ url: `${REPOSITORY}/issues` });
    });

    it(`declares engines.node ${NODE_ENGINE} and its side effects precisely`, () => {
      expect(record(manifest.engines).node).toBe(NODE_ENGINE);
      const sideEffects = manifest.sideEffects;
      const precise =
        sideEffects === false ||
        (Array.isArray(sideEffects) &&
          sideEffects.length > 0 &&
          sideEffects.every((file) => typeof file === "string" && file.startsWith("./dist/")));
      expect(precise, "sideEffects is false or a list of ./dist/ files").toBe(true);
    });

    it("depends on ranges, not exact versions", () => {
      const offences: string[] = [];
      for (const field of ["dependencies", "peerDependencies", "optionalDependencies"] as const) {
        for (const [name, spec] of Object.entries(manifest[field] ?? {})) {
          if (spec.startsWith("workspace:")) continue;
          if (name === "@cloudflare/sandbox" ? !SANDBOX_SDK_LINE.test(spec) : !RANGE.test(spec))
            offences.push(`${field}.${name}: ${spec}`);
        }
      }
      expect(offences, "use ^x.y.z (or ~0.12.n for @cloudflare/sandbox)").toEqual([]);
    });

    it("says in its README that it is ESM only", async () => {
      const readme = await readFile(join(member.dir, "README.md"), "utf8").catch(() => "");
      expect(readme).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
    });
  },
);

it("imports zod as a namespace everywhere, so Worker bundles leave its locales out", async () => {
  // `import { z } from "zod"` makes esbuild keep the whole `z` object, `z.locales` included (~260 KB minified).
  const offences: string[] = [];
  for (const member of members) {
    for (const file of await listFiles(member.dir, (name) => /\.(c|m)?tsx?$/.test(name))) {
      const text = await readFile(file, "utf8");
      if (/import\s+(type\s+)?\{[^}]*\bz\b[^}]*\}\s+from\s+["']zod["']/.test(text))
        offences.push(repoPath(file));
    }
  }
  expect(offences, 'write `import * as z from "zod"`').toEqual([]);
});
