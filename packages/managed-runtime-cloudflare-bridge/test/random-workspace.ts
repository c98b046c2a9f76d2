/** A small deterministic PRNG (mulberry32), so a failing seed can be replayed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODES = ["644", "600", "755", "444", "700"];
const DIR_MODES = ["755", "700", "750"];

/**
 * Shell script that changes `/workspace` at random: creates files (text, zeros and random bytes, some larger
 * than a restore part), empty folders, relative and absolute in-workspace symlinks; rewrites, chmods and
 * deletes existing ones. `step` 0 builds the first tree.
 */
export function mutationScript(random: () => number, step: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const name = () => `n${Math.floor(random() * 40)}`;
  // Folders down to depth 4, below the levels one find of the sandbox's walk lists (see sandbox-walk.ts).
  const dir = () => pick(["", "a/", "a/b/", "c/", "c/d e/", "a/b/e/f g/"]);
  const lines = ["set -e", "cd /workspace", "mkdir -p a/b c 'c/d e' 'a/b/e/f g'"];
  const operations = step === 0 ? 30 : 6;
  for (let index = 0; index < operations; index += 1) {
    const folder = dir();
    const quoted = `'${folder}${name()}'`;
    const roll = random();
    if (roll < 0.35) {
      const size = Math.floor(random() * (random() < 0.1 ? 200_000 : 3_000));
      const source = random() < 0.5 ? "/dev/urandom" : "/dev/zero";
      lines.push(
        `rm -rf ${quoted}; head -c ${size} ${source} > ${quoted}; chmod ${pick(MODES)} ${quoted}`,
      );
    } else if (roll < 0.5) {
      lines.push(
        `rm -rf ${quoted}; printf '%s\\n' 'line ${step} ${index}' 'more text' > ${quoted}`,
      );
    } else if (roll < 0.6) {
      lines.push(`rm -rf ${quoted}; mkdir -p ${quoted}; chmod ${pick(DIR_MODES)} ${quoted}`);
    } else if (roll < 0.7) {
      const depth = folder.split("/").length - 1;
      const link = random() < 0.5 ? `/workspace/${dir()}` : `${"../".repeat(depth)}a/b`;
      lines.push(`rm -rf ${quoted}; ln -s '${link}' ${quoted}`);
    } else if (roll < 0.85) {
      lines.push(`rm -rf ${quoted}`);
    } else {
      lines.push(
        `if [ -f ${quoted} ] && [ ! -L ${quoted} ]; then chmod ${pick(MODES)} ${quoted}; fi`,
      );
    }
  }
  lines.push(
    "chmod u+rwx a a/b c 'c/d e' a/b/e 'a/b/e/f g'",
    `printf x > "c/name with space ${step}.txt"`,
  );
  return lines.join("\n");
}

/** Shell command printing a canonical description of `/workspace`: type, mode, size, mtime and hash of files, link targets. */
export const DESCRIBE_WORKSPACE = [
  "cd /workspace && {",
  "find . -mindepth 1 -type d -printf 'd %m %P\\n';",
  "find . -mindepth 1 -type l -printf 'l %P -> %l\\n';",
  "find . -mindepth 1 -type f -printf 'f %m %s %Ts %P\\n';",
  "find . -mindepth 1 -type f -print0 | xargs -0 -r sha256sum;",
  "} | LC_ALL=C sort",
].join(" ");
