import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { EGRESS_CA_CERTIFICATE_PATH } from "./egress-ca.js";

/** The system bundle curl, wget, Python's ssl and OpenSSL read on Debian. */
export const SYSTEM_CA_BUNDLE_PATH = "/etc/ssl/certs/ca-certificates.crt";

/** What commands of a container whose HTTPS the proxy intercepts get, for tools that skip the system bundle. */
export const EGRESS_TLS_ENV: Readonly<Record<string, string>> = {
  NODE_EXTRA_CA_CERTS: EGRESS_CA_CERTIFICATE_PATH,
  SSL_CERT_FILE: SYSTEM_CA_BUNDLE_PATH,
  REQUESTS_CA_BUNDLE: SYSTEM_CA_BUNDLE_PATH,
};

/**
 * Makes a container trust the proxy's CA: writes the certificate (never a key) to
 * {@link EGRESS_CA_CERTIFICATE_PATH} and appends it to the container's own copy of the system bundle.
 * `hostPath` maps a container path into the container's copy-on-write root, so the host's `/etc` is
 * never written.
 */
export async function installEgressTrust(
  hostPath: (containerPath: string) => string,
  certificatePem: string,
): Promise<void> {
  const certificate = hostPath(EGRESS_CA_CERTIFICATE_PATH);
  await mkdir(dirname(certificate), { recursive: true });
  await writeFile(certificate, certificatePem, { mode: 0o644 });
  const bundle = hostPath(SYSTEM_CA_BUNDLE_PATH);
  let existing = "";
  try {
    existing = await readFile(bundle, "utf8");
  } catch {
    await mkdir(dirname(bundle), { recursive: true });
  }
  const separator = existing === "" || existing.endsWith("\n") ? "" : "\n";
  await writeFile(bundle, `${existing}${separator}${certificatePem}`, { mode: 0o644 });
}
