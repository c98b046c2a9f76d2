import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Builds a pure-Python wheel by hand (a zip with the package, its dist-info and a console script), so pip
 * installs it with `--no-index --find-links` and no build backend or network.
 */
export function buildWheel(dir: string, name: string, version: string, script: string): string {
  const module = name.replaceAll("-", "_");
  const file = join(dir, `${module}-${version}-py3-none-any.whl`);
  const builder = `
import sys, zipfile, hashlib, base64
file, module, name, version, script = sys.argv[1:6]
info = f"{module}-{version}.dist-info"
files = {
  f"{module}/__init__.py": f"VERSION = {version!r}\\ndef main():\\n    print('{name} ' + VERSION)\\n",
  f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
  f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
  f"{info}/entry_points.txt": f"[console_scripts]\\n{script} = {module}:main\\n",
}
record = []
with zipfile.ZipFile(file, "w") as z:
  for path, text in files.items():
    data = text.encode()
    z.writestr(path, data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(data)}")
  record.append(f"{info}/RECORD,,")
  z.writestr(f"{info}/RECORD", "\\n".join(record) + "\\n")
`;
  execFileSync("python3", ["-c", builder, file, module, name, version, script]);
  return file;
}

/** Packs an npm package with one executable into a tarball with `npm pack` (no registry involved). */
export function packNpmTool(dir: string, name: string, version: string, bin: string): string {
  const source = join(dir, `${name}-src`);
  mkdirSync(source, { recursive: true });
  writeFileSync(
    join(source, "package.json"),
    JSON.stringify({ name, version, bin: { [bin]: "cli.js" } }),
  );
  writeFileSync(
    join(source, "cli.js"),
    `#!/usr/bin/env node\nconsole.log(${JSON.stringify(`${name} ${version}`)});\n`,
    { mode: 0o755 },
  );
  const out = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
    cwd: source,
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  return join(dir, out.toString().trim().split("\n").pop() ?? "");
}
