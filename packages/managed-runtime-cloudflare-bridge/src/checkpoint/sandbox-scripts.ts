import { shellQuote } from "@open-managed-agents/runtime-resource-contract";
import { MAX_HOLE_BYTES, MAX_PATH_BYTES } from "./capture-refusals.js";
import { type WalkOutput, parallelWalk } from "./sandbox-walk.js";

/**
 * The sandbox's listing cache: the sorted entry records of its last pass (`records`), a stamp older than that
 * listing (`stamp`) and the pass's id (`pass`). Kept outside `/workspace`, so never checkpointed. The next
 * pass lists again, hashes only files changed since the stamp (by mtime or ctime) and reports the records
 * that differ; what it does not hash is taken from the manifest that pass built, so the cache can never
 * name a content: a stale or altered cache only costs a full pass.
 */
export const SANDBOX_CACHE = "/tmp/.oma-manifest-cache";

/**
 * A script that makes the workspace as it is now the listing cache of pass `pass` (run right after a restore
 * of the manifest that pass built): a stamp, then the sorted entry records, as a checkpoint's pass leaves
 * them. Best effort: it fails by leaving no cache.
 */
export function seedListingCache(pass: string, excludes: readonly string[]): string {
  const scratch = `/tmp/.oma-seed-${crypto.randomUUID()}`;
  const listed: WalkOutput = { file: `${scratch}/listed`, relative: true };
  const prune = excludes.length === 0 ? "-false" : excludes.map(pruneExpression).join(" -o ");
  return (
    [
      `rm -rf ${SANDBOX_CACHE} && mkdir -p ${scratch} && touch -d "@$(( $(date +%s) - 2 ))" ${scratch}/stamp && cd /workspace`,
      parallelWalk({
        prune,
        scratch,
        outputs: [listed],
        actions: (path, into) => `-fprintf ${into(listed)} '${path}//e%y %m %s %T@ %l\\0'`,
      }),
      `LC_ALL=C sort -z ${scratch}/listed > ${scratch}/records`,
      `mkdir -p ${SANDBOX_CACHE} && mv ${scratch}/records ${SANDBOX_CACHE}/records && mv ${scratch}/stamp ${SANDBOX_CACHE}/stamp && printf '%s' ${shellQuote(pass)} > ${SANDBOX_CACHE}/pass`,
    ].join(" && ") + `; rm -rf ${scratch}`
  );
}

/** Files sampled to decide on gzip, spread evenly over the bytes to send, and bytes read from each. */
const SAMPLE_FILES = 32;
const SAMPLE_FILE_BYTES = 32 * 1024;
/** Workspaces smaller than this go uncompressed when only gzip is at hand: a sample says little, and it costs little. */
const SAMPLE_MIN_BYTES = 1024 * 1024;

/** find(1) test (two words) that holds for one tar-style exclude pattern: a bare name matches any component. */
function pruneTest(pattern: string): [string, string] {
  const trimmed = pattern.replace(/^\.\//, "").replace(/\/+$/, "");
  return trimmed.includes("/") ? ["-path", `./${trimmed}`] : ["-name", trimmed];
}

/** find(1) expression that prunes one tar-style exclude pattern, quoted for a shell. */
export function pruneExpression(pattern: string): string {
  const [test, operand] = pruneTest(pattern);
  return `${test} ${shellQuote(operand)}`;
}

/** find(1) arguments, one a word, that hold for any of the excludes' paths; `-false` when there are none. */
export function pruneArguments(excludes: readonly string[]): string[] {
  if (excludes.length === 0) return ["-false"];
  return excludes.flatMap((pattern, index) =>
    index === 0 ? pruneTest(pattern) : ["-o", ...pruneTest(pattern)],
  );
}

/**
 * A shell condition, run in `/workspace`, that holds when gzip -1 shrinks a sample of the listed files below
 * 80 %: the first 32 KiB of up to 32 files at even steps through their bytes (the head of the listing is no
 * fair sample: it is the first files in path order, often a folder of small ones unlike the rest, and gzip
 * over a whole random workspace made archiving 15× slower). `entries` holds the listing's records.
 */
export function samplePaysScript(entries: string, scratch: string): string {
  const paths = `${scratch}/sample-paths`;
  const bytes = `${scratch}/sample-bytes`;
  // Records `<path>//e<type> <mode> <size> …`, one a line for awk (a path holding a newline is only skipped).
  const program = [
    `function size(line,  at, rest, fields) { at = index(line, "//e"); if (at == 0) return -1; rest = substr(line, at + 3); if (substr(rest, 1, 2) != "f ") return -1; split(rest, fields, " "); return fields[3] + 0 }`,
    `NR == FNR { s = size($0); if (s > 0) total += s; next }`,
    `FNR == 1 { if (total < least) exit; step = total / want }`,
    `{ s = size($0); if (s <= 0) next; if (reached + s > picked * step) { print "./" substr($0, 1, index($0, "//e") - 1); picked++ } reached += s; if (picked >= want) exit }`,
  ].join("\n");
  const pick = `tr '\\0' '\\n' < ${entries} > ${scratch}/sample-lines && awk -v want=${SAMPLE_FILES} -v least=${SAMPLE_MIN_BYTES} '${program}' ${scratch}/sample-lines ${scratch}/sample-lines > ${paths}`;
  const read = `while IFS= read -r file; do head -c ${SAMPLE_FILE_BYTES} "$file" 2>/dev/null; done < ${paths} > ${bytes}`;
  return `{ ${pick} && ${read} && raw=$(wc -c < ${bytes}) && packed=$(gzip -1 < ${bytes} | wc -c) && rm -f ${scratch}/sample-lines ${paths} ${bytes} && [ "$raw" -gt 0 ] && [ $((packed * 5)) -lt $((raw * 4)) ]; }`;
}

/**
 * find(1) actions that write `<size> <512-byte blocks> <path>` of each regular file over {@link MAX_HOLE_BYTES}
 * into `into` (NUL-terminated): the candidates {@link sparseCheck} reads. `path` is the walk's path directive.
 */
export function largeFileActions(path: string, into: string): string {
  return `-type f -size +${MAX_HOLE_BYTES / 1024}k -fprintf ${into} '%s %b ${path}\\0'`;
}

/**
 * A shell command that prints `sparse <size> <blocks> <path>` for the first file of `large` (written by
 * {@link largeFileActions}) whose apparent size exceeds its allocated blocks by more than {@link MAX_HOLE_BYTES},
 * and nothing when there is none. A path holding a newline is printed up to it.
 */
export function sparseCheck(large: string): string {
  const program = `$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $1 - $2 * 512 > ${MAX_HOLE_BYTES} { print "sparse " $1 " " $2 " " substr($0, length($1) + length($2) + 3); exit }`;
  return `{ [ ! -s ${large} ] || LC_ALL=C tr '\\0' '\\n' < ${large} | LC_ALL=C awk '${program}'; }`;
}

/**
 * A shell command that prints `long <name>` (its first 300 bytes) for the first name of `names` (NUL-terminated
 * `./<path>` names) whose path is longer than {@link MAX_PATH_BYTES}, and nothing when there is none. awk
 * counts bytes in the C locale (a bounded regex in grep took over a minute on 2,100 nested names); a name
 * holding a newline is measured in pieces, and one too long for all that fails tar's read, which names it.
 */
export function longNameCheck(names: string): string {
  const program = `length($0) > ${MAX_PATH_BYTES + 2} { print "long " substr($0, 1, 300); exit }`;
  return `{ LC_ALL=C tr '\\0' '\\n' < ${names} | LC_ALL=C awk '${program}'; }`;
}

/** The entry a line of `sparse …` output names, with its size and allocated bytes; null for any other line. */
export function parseSparseLine(
  line: string,
): { readonly path: string; readonly size: number; readonly allocated: number } | null {
  const match = /^sparse (\d+) (\d+) (.*)$/s.exec(line);
  if (!match) return null;
  const [, size = "0", blocks = "0", path = ""] = match;
  return { path: path.replace(/^\.\//, ""), size: Number(size), allocated: Number(blocks) * 512 };
}
