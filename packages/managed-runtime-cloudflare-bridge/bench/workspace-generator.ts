const MIB = 1024 * 1024;

/** Sizes of small files, cycled over the small-file directories (odd sizes leave tar padding). */
const SMALL_FILE_SIZES = [517, 1024, 2900, 4096, 7001];
const SMALL_DIRECTORIES = 32;
/** Large files are larger than a part, so restore joins chunks. */
const LARGE_FILE_BYTES = 48 * MIB + 12_345;

/** What the generator writes, for the report. */
export interface WorkspacePlan {
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
    lines.push(`mkdir -p ${directory} && head -c ${smallBytesPerDirectory} /dev/urandom | split -b ${size} -a 4 -d - ${directory}/f`);
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
  lines.push("printf '#!/bin/sh\\necho tool\\n' > bin/tool.sh && chmod 755 bin/tool.sh", "ln -s ../large/l0.bin bin/large-link");
  return { script: lines.join("\n"), smallFiles, mediumFiles, largeFiles, totalBytes: total };
}

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
