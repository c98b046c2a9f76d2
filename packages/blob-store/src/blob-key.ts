import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";

/** Longest key, in UTF-8 bytes, that every implementation accepts (the S3 and R2 limit). */
export const MAX_BLOB_KEY_BYTES = 1024;

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Checks a blob key and returns it unchanged. A key is a non-empty `/`-separated path of at most
 * {@link MAX_BLOB_KEY_BYTES} UTF-8 bytes, with no leading slash, no empty, `.` or `..` segment, no
 * control character and no unpaired surrogate.
 *
 * @throws InvalidRequestError naming the rule the key breaks.
 */
export function validateBlobKey(key: unknown): string {
  const fail = (reason: string): never => {
    throw new InvalidRequestError({
      message: `invalid blob key: ${reason}`,
      context: { reason, key: typeof key === "string" ? key.slice(0, 200) : null },
    });
  };
  if (typeof key !== "string") return fail("a key must be a string");
  checkKeyText(key, "key", fail);
  if (key.length === 0) fail("a key must not be empty");
  for (const segment of key.split("/")) {
    if (segment === "") fail("a key must not contain an empty segment");
    if (segment === "." || segment === "..") fail(`a key must not contain a '${segment}' segment`);
  }
  return key;
}

/** Checks a list prefix: the text rules of a key, but any segment shape (`a/`, `a/.x`). */
export function validateBlobPrefix(prefix: unknown): string {
  const fail = (reason: string): never => {
    throw new InvalidRequestError({
      message: `invalid blob list prefix: ${reason}`,
      context: { reason },
    });
  };
  if (typeof prefix !== "string") return fail("a prefix must be a string");
  checkKeyText(prefix, "prefix", fail);
  return prefix;
}

function checkKeyText(text: string, name: string, fail: (reason: string) => never): void {
  if (text.startsWith("/")) fail(`a ${name} must not start with '/'`);
  if (CONTROL_CHARACTER.test(text)) fail(`a ${name} must not contain control characters`);
  if (LONE_SURROGATE.test(text)) fail(`a ${name} must be well-formed Unicode`);
  if (utf8Length(text) > MAX_BLOB_KEY_BYTES)
    fail(`a ${name} must be at most ${MAX_BLOB_KEY_BYTES} UTF-8 bytes`);
}

/** UTF-8 byte length of a well-formed string. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (const character of text) {
    const codePoint = character.codePointAt(0) ?? 0;
    bytes += codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/**
 * Orders keys by Unicode code point, which is the UTF-8 byte order S3 and R2 list in. (Plain `<`
 * compares UTF-16 code units and puts astral characters before U+E000–U+FFFF.)
 */
export function compareBlobKeys(left: string, right: string): number {
  const leftPoints = left[Symbol.iterator]();
  const rightPoints = right[Symbol.iterator]();
  for (;;) {
    const leftNext = leftPoints.next();
    const rightNext = rightPoints.next();
    if (leftNext.done) return rightNext.done ? 0 : -1;
    if (rightNext.done) return 1;
    const difference = (leftNext.value.codePointAt(0) ?? 0) - (rightNext.value.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
}
