const MIB = 1024 * 1024;

/** Sizes of small files, cycled over the small-file directories (odd sizes leave tar padding). */
const SMALL_FILE_SIZES = [517, 1024, 2900, 4096, 7001];
const SMALL_DIRECTORIES = 32;
/** Large files are larger than a part, so restore joins chunks. */
const LARGE_FILE_BYTES = 48 * MIB + 12_345;

/** What the generator writes, for the report. */
export interface WorkspacePlan {
  readonly kind: "random" | "source";
  readonly script: string;
  readonly smallFiles: number;
  readonly mediumFiles: number;
  readonly largeFiles: number;
  readonly totalBytes: number;
}

/**
 * A shell script that fills `/workspace` inside the sandbox with `totalMiB` of incompressible data:
 * one eighth in many small files (split from one random stream), one eighth in 1–6 MiB files, the rest
 * in files larger than a part, plus an empty directory, a symlink and an executable.
 */
export function workspacePlan(totalMiB: number): WorkspacePlan {
  const total = totalMiB * MIB;
  const smallBytesPerDirectory = Math.floor(total / 8 / SMALL_DIRECTORIES);
  const lines = ["set -e", "cd /workspace", "mkdir -p small medium large empty/nested bin"];
  let smallFiles = 0;
  for (let index = 0; index < SMALL_DIRECTORIES; index++) {
    const size = SMALL_FILE_SIZES[index % SMALL_FILE_SIZES.length] ?? 4096;
    const directory = `small/d${String(index).padStart(2, "0")}`;
    lines.push(
      `mkdir -p ${directory} && head -c ${smallBytesPerDirectory} /dev/urandom | split -b ${size} -a 4 -d - ${directory}/f`,
    );
    smallFiles += Math.ceil(smallBytesPerDirectory / size);
  }
  let mediumBytes = Math.floor(total / 8);
  let mediumFiles = 0;
  while (mediumBytes > 0) {
    const size = Math.min(mediumBytes, ((mediumFiles % 6) + 1) * MIB + 4_321);
    lines.push(`head -c ${size} /dev/urandom > medium/m${mediumFiles}.bin`);
    mediumBytes -= size;
    mediumFiles += 1;
  }
  let largeBytes = total - smallBytesPerDirectory * SMALL_DIRECTORIES - Math.floor(total / 8);
  let largeFiles = 0;
  while (largeBytes > 0) {
    const size = Math.min(largeBytes, LARGE_FILE_BYTES);
    lines.push(`head -c ${size} /dev/urandom > large/l${largeFiles}.bin`);
    largeBytes -= size;
    largeFiles += 1;
  }
  lines.push(
    "printf '#!/bin/sh\\necho tool\\n' > bin/tool.sh && chmod 755 bin/tool.sh",
    "ln -s ../large/l0.bin bin/large-link",
  );
  return {
    kind: "random",
    script: lines.join("\n"),
    smallFiles,
    mediumFiles,
    largeFiles,
    totalBytes: total,
  };
}

/** Packages of the node_modules-shaped source tree per 256 MiB (a folder stays under split's 10,000 names). */
const SOURCE_PACKAGES_PER_256_MIB = 64;

/**
 * A shell script that fills `/workspace` with `totalMiB` of source-like, compressible text: JavaScript-like
 * lines with varying identifiers and numbers (gzip -1 shrinks it about 3–4×; no two files are equal, so
 * content dedup does not flatter the figures), split into 0.5–8 KiB files under `node_modules/<pkg>/lib`
 * and `src/`.
 */
export function sourcePlan(totalMiB: number): WorkspacePlan {
  const total = totalMiB * MIB;
  const packages = SOURCE_PACKAGES_PER_256_MIB * Math.max(1, Math.ceil(totalMiB / 256));
  const perPackage = Math.floor(total / (packages + 1));
  const lines = ["set -e", "cd /workspace", "mkdir -p src empty/nested bin"];
  let smallFiles = 0;
  const generator = (seed: number, bytes: number, size: number, directory: string) =>
    `mkdir -p ${directory} && awk -v seed=${seed} 'BEGIN { srand(seed); for (;;) { n = int(rand() * 100000); printf "export function handler_%d_%d(request, options) { const value = options.limit * %d + request.size; return value > %d ? \\"large\\" : \\"small\\"; } // line %d\\n", seed, n, n % 97, n, NR++ } }' | head -c ${bytes} | split -b ${size} -a 4 -d - ${directory}/f`;
  for (let index = 0; index <= packages; index++) {
    const size = SMALL_FILE_SIZES[index % SMALL_FILE_SIZES.length] ?? 4096;
    const directory =
      index === packages ? "src" : `node_modules/pkg${String(index).padStart(3, "0")}/lib`;
    lines.push(generator(index + 1, perPackage, size, directory));
    smallFiles += Math.ceil(perPackage / size);
  }
  lines.push(
    "printf '#!/bin/sh\\necho tool\\n' > bin/tool.sh && chmod 755 bin/tool.sh",
    "ln -s ../src bin/src-link",
  );
  return {
    kind: "source",
    script: lines.join("\n"),
    smallFiles,
    mediumFiles: 0,
    largeFiles: 0,
    totalBytes: perPackage * (packages + 1),
  };
}

/**
 * Rewrites every hundredth regular file (1% of the files) with new bytes of the same size: the change
 * between the first and the second checkpoint. Prints the number of files changed.
 */
export const CHANGE_ONE_PERCENT_SCRIPT = [
  "cd /workspace",
  "find . -type f | LC_ALL=C sort | awk 'NR % 100 == 0' > /tmp/bench-changed",
  'while IFS= read -r file; do head -c "$(stat -c %s "$file")" /dev/urandom > "$file.new" && mv "$file.new" "$file"; done < /tmp/bench-changed',
  "wc -l < /tmp/bench-changed",
].join(" && ");

/**
 * A script printing `<entries> <digest>` of `/workspace`: every path with its type, mode and link target,
 * and the sha256 of every regular file. Equal output before and after a round trip means equal trees.
 */
export const MANIFEST_SCRIPT = [
  "cd /workspace",
  "{ find . -mindepth 1 -printf '%y %m %p %l\\n' | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; } > /tmp/bench-manifest",
  'echo "$(find . -mindepth 1 | wc -l) $(sha256sum < /tmp/bench-manifest | cut -d" " -f1)"',
].join(" && ");

/** Bytes of `/workspace` as the driver measures them. */
export const MEASURE_SCRIPT = "du -sb /workspace | cut -f1";
