import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { discoverMembers } from "./workspace.js";

/** `>=a.b[.c]` → [a, b, c]. */
function floor(range: string | undefined): number[] {
  const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range ?? "");
  if (!match) throw new Error(`engines.node ${range ?? "(missing)"} is not a >= range`);
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

// docs/node-versions.md says which Node each part needs; this holds every app's `engines` to it. An app that
// deploys with wrangler needs at least the Node its pinned wrangler declares (newer wrangler needs more).
describe("engines.node of the apps", () => {
  it("is declared by every app and is no lower than its pinned wrangler's", async () => {
    const problems: string[] = [];
    for (const app of (await discoverMembers()).filter((member) => member.kind === "app")) {
      const engines = (app.manifest as { engines?: { node?: string } }).engines?.node;
      if (engines === undefined) {
        problems.push(`${app.path}: no engines.node`);
        continue;
      }
      if (!("wrangler" in (app.manifest.devDependencies ?? {}))) continue;
      const wrangler = JSON.parse(
        await readFile(join(app.dir, "node_modules", "wrangler", "package.json"), "utf8"),
      ) as { version: string; engines?: { node?: string } };
      const [ours, theirs] = [floor(engines), floor(wrangler.engines?.node)];
      const lower = ours.findIndex((part, index) => part !== theirs[index]);
      if (lower !== -1 && (ours[lower] ?? 0) < (theirs[lower] ?? 0)) {
        problems.push(
          `${app.path}: engines.node ${engines} is below wrangler ${wrangler.version}'s ${wrangler.engines?.node}`,
        );
      }
    }
    expect(problems).toEqual([]);
  });
});
