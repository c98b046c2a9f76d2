import { generateKeyPairSync, randomBytes } from "node:crypto";
import { isIP } from "node:net";
import { type SecureContext, createSecureContext } from "node:tls";
import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import forge from "node-forge";
import * as z from "zod";

/**
 * A certificate authority that lives only in the process that created it: the egress proxy terminates
 * a container's TLS with leaf certificates it signs, and the container trusts its certificate. The
 * private keys never leave this object (nothing writes them to a file).
 */
export interface EgressCertificateAuthority {
  /** The CA certificate (PEM), what a container installs to trust the proxy. */
  readonly certificatePem: string;
  /** A TLS context whose certificate names `host`, signed by this CA; minted once per host and cached. */
  secureContextFor(host: string): SecureContext;
}

/** Where a container finds the CA certificate, as on Cloudflare (`interceptHttps` of `@cloudflare/containers`). */
export const EGRESS_CA_CERTIFICATE_PATH = "/etc/cloudflare/certs/cloudflare-containers-ca.crt";

/** Leaf certificates cached per CA; past this the oldest is minted again when asked for. */
const MAX_CACHED_LEAVES = 256;
const DAY_MS = 86_400_000;

function rsaKeys(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  // Node generates the key (native and fast); forge only signs with it.
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const forgeKey = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { privateKey: forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

function serial(): string {
  // A positive serial: the top bit clear.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString("hex");
}

const optionsSchema = z
  .object({
    /** Subject of the CA certificate. */
    commonName: z.string().min(1).max(64).optional(),
    /** How long the CA and its leaves are valid, in days. @default 30 */
    validDays: z.number().int().min(1).max(825).optional(),
  })
  .strict();

/** Options of {@link createEgressCertificateAuthority}. */
export type EgressCertificateAuthorityOptions = z.input<typeof optionsSchema>;

/**
 * Creates a CA valid for `validDays` (certificates start a day early to absorb clock skew). Bad options
 * → `invalid_config`.
 */
export function createEgressCertificateAuthority(
  input: EgressCertificateAuthorityOptions = {},
): EgressCertificateAuthority {
  const parsed = optionsSchema.safeParse(input);
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path.join(".") ?? "";
    throw new InvalidConfigError({
      message: `invalid egress CA option ${field}: ${parsed.error.issues[0]?.message ?? "invalid"}`,
      context: { field },
      cause: parsed.error,
    });
  }
  const options = parsed.data;
  const validDays = options.validDays ?? 30;
  const now = Date.now();
  const notBefore = new Date(now - DAY_MS);
  const notAfter = new Date(now + validDays * DAY_MS);
  const caKeys = rsaKeys();
  const caName = [
    { name: "commonName", value: options.commonName ?? "open-managed-agents local egress CA" },
    { name: "organizationName", value: "open-managed-agents" },
  ];
  const ca = forge.pki.createCertificate();
  ca.publicKey = caKeys.publicKey;
  ca.serialNumber = serial();
  ca.validity.notBefore = notBefore;
  ca.validity.notAfter = notAfter;
  ca.setSubject(caName);
  ca.setIssuer(caName);
  ca.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  // forge writes CRLF; bundles and tools expect LF.
  const certificatePem = forge.pki.certificateToPem(ca).replace(/\r\n/g, "\n");
  // One key for every leaf: each leaf is only as trusted as the CA that signs it.
  const leafKeys = rsaKeys();
  const leafKeyPem = forge.pki.privateKeyToPem(leafKeys.privateKey);
  const leaves = new Map<string, SecureContext>();

  const mint = (host: string): SecureContext => {
    const leaf = forge.pki.createCertificate();
    leaf.publicKey = leafKeys.publicKey;
    leaf.serialNumber = serial();
    leaf.validity.notBefore = notBefore;
    leaf.validity.notAfter = notAfter;
    leaf.setSubject([{ name: "commonName", value: host.slice(0, 64) }]);
    leaf.setIssuer(caName);
    leaf.setExtensions([
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [isIP(host) === 0 ? { type: 2, value: host } : { type: 7, ip: host }],
      },
      {
        name: "authorityKeyIdentifier",
        keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes(),
      },
    ]);
    leaf.sign(caKeys.privateKey, forge.md.sha256.create());
    return createSecureContext({
      key: leafKeyPem,
      cert: `${forge.pki.certificateToPem(leaf)}${certificatePem}`,
    });
  };

  return {
    certificatePem,
    secureContextFor(host) {
      const name = host.toLowerCase();
      let context = leaves.get(name);
      if (context === undefined) {
        context = mint(name);
        if (leaves.size >= MAX_CACHED_LEAVES) leaves.delete(leaves.keys().next().value as string);
        leaves.set(name, context);
      }
      return context;
    },
  };
}
