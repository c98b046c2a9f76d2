// S3 lowercases metadata names and carries values in HTTP headers, so names and values are encoded
// to round-trip exactly: in a name, `_` becomes `__` and an upper-case letter `_` + its lower case;
// a value that is not plain printable ASCII (or that looks encoded) becomes RFC 2047 base64 words.

const ENCODED_VALUE = /^=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=$/;
const PLAIN_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

/** Encodes custom metadata for S3 `x-amz-meta-*` headers. */
export function encodeS3Metadata(
  metadata: Readonly<Record<string, string>>,
): Record<string, string> {
  const encoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata)) {
    const encodedName = name.replace(/[A-Z_]/g, (character) =>
      character === "_" ? "__" : `_${character.toLowerCase()}`,
    );
    encoded[encodedName] =
      PLAIN_VALUE.test(value) && !value.startsWith("=?") ? value : `=?UTF-8?B?${toBase64(value)}?=`;
  }
  return encoded;
}

/** Decodes metadata read from S3; names that do not follow the encoding are kept as S3 returned them. */
export function decodeS3Metadata(
  metadata: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata ?? {})) {
    const decodedName = name.replace(/_(_|[a-z])/g, (_, character: string) =>
      character === "_" ? "_" : character.toUpperCase(),
    );
    const match = ENCODED_VALUE.exec(value);
    decoded[decodedName] = match ? fromBase64(match[1] ?? "") : value;
  }
  return decoded;
}

function toBase64(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(base64: string): string {
  const binary = atob(base64);
  return new TextDecoder().decode(Uint8Array.from(binary, (character) => character.charCodeAt(0)));
}
