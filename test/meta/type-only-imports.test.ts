import { readFile } from "node:fs/promises";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { discoverMembers, listFiles, repoPath } from "./workspace.js";

// Under `verbatimModuleSyntax`, `import { type A, type B } from "m"` compiles to `import "m"`: a bare import
// that keeps `m` evaluated for its side effects. Bundlers then drop it from packages marked
// `sideEffects: false` and warn about it in every Worker build. `import type { A, B }` compiles to nothing.
describe("imports whose every binding is a type", () => {
  it("are written `import type`, so no bare import is left in a package's dist", async () => {
    const found: string[] = [];
    for (const member of await discoverMembers()) {
      for (const file of await listFiles(
        join(member.dir, "src"),
        (name) => /\.(ts|tsx|mts)$/.test(name) && !name.endsWith(".d.ts"),
      )) {
        const source = ts.createSourceFile(
          file,
          await readFile(file, "utf8"),
          ts.ScriptTarget.Latest,
          true,
        );
        for (const statement of source.statements) {
          if (
            !ts.isImportDeclaration(statement) ||
            !statement.importClause ||
            statement.importClause.isTypeOnly
          )
            continue;
          const { name, namedBindings } = statement.importClause;
          if (
            name ||
            !namedBindings ||
            !ts.isNamedImports(namedBindings) ||
            namedBindings.elements.length === 0
          )
            continue;
          if (namedBindings.elements.every((element) => element.isTypeOnly)) {
            const { line } = source.getLineAndCharacterOfPosition(statement.getStart());
            found.push(`${repoPath(file)}:${line + 1} ${statement.moduleSpecifier.getText()}`);
          }
        }
      }
    }
    expect(found, "write these as `import type { … }`").toEqual([]);
  });
});
