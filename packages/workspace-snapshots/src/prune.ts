/** find(1) test (two words) for one tar-style exclude pattern: a bare name matches any component. */
function pruneTest(pattern: string): [string, string] {
  const trimmed = pattern.replace(/^\.\//, "").replace(/\/+$/, "");
  return trimmed.includes("/") ? ["-path", `./${trimmed}`] : ["-name", trimmed];
}

/** find(1) arguments, one a word, that hold for any of the excludes' paths; `-false` when there are none. */
export function pruneArguments(excludes: readonly string[]): string[] {
  if (excludes.length === 0) return ["-false"];
  return excludes.flatMap((pattern, index) =>
    index === 0 ? pruneTest(pattern) : ["-o", ...pruneTest(pattern)],
  );
}
