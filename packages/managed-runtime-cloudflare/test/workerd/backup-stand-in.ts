/**
 * Stands in for the container image's squashfs backup routes (`/api/backup/create` and
 * `/api/backup/restore`), which the local container server does not implement. The archive is a tar
 * made and unpacked by the container's own `tar`, moved through the SDK's own file API and stored in the
 * real (local) R2 `BACKUP_BUCKET` under the SDK's key layout. Everything on the driver side of the
 * Durable Object boundary, and every other SDK call, is the real thing.
 */
import type { Sandbox } from "@cloudflare/sandbox";

interface BackupEnv {
  readonly BACKUP_BUCKET: R2Bucket;
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let offset = 0; offset < bytes.byteLength; offset += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return btoa(binary);
}

export async function standInCreateBackup(
  sandbox: Sandbox<BackupEnv>,
  env: BackupEnv,
  options: { dir: string; ttl?: number },
): Promise<{ id: string; dir: string; localBucket: true }> {
  const id = crypto.randomUUID();
  const archive = `/tmp/.oma-backup-${id}.tar`;
  const packed = await sandbox.exec(`tar cf '${archive}' -C '${options.dir}' .`);
  if (packed.exitCode !== 0)
    throw new Error(`BACKUP_CREATE_FAILED: tar exited ${packed.exitCode}: ${packed.stderr}`);
  const file = await sandbox.readFile(archive, { encoding: "base64" });
  const bytes = Uint8Array.from(atob(file.content), (character) => character.charCodeAt(0));
  await env.BACKUP_BUCKET.put(`backups/${id}/data.sqsh`, bytes);
  await env.BACKUP_BUCKET.put(
    `backups/${id}/meta.json`,
    JSON.stringify({
      id,
      dir: options.dir,
      ttl: options.ttl ?? 259200,
      createdAt: new Date().toISOString(),
    }),
  );
  await sandbox.exec(`rm -f '${archive}'`);
  return { id, dir: options.dir, localBucket: true };
}

export async function standInRestoreBackup(
  sandbox: Sandbox<BackupEnv>,
  env: BackupEnv,
  backup: { id: string; dir: string },
): Promise<{ success: true; dir: string; id: string }> {
  const object = await env.BACKUP_BUCKET.get(`backups/${backup.id}/data.sqsh`);
  if (!object) throw new Error(`BACKUP_NOT_FOUND: Backup not found: ${backup.id}`);
  const archive = `/tmp/.oma-restore-${backup.id}.tar`;
  await sandbox.writeFile(archive, toBase64(new Uint8Array(await object.arrayBuffer())), {
    encoding: "base64",
  });
  const unpacked = await sandbox.exec(
    `mkdir -p '${backup.dir}' && tar xf '${archive}' -C '${backup.dir}' && rm -f '${archive}'`,
  );
  if (unpacked.exitCode !== 0)
    throw new Error(`BACKUP_RESTORE_FAILED: tar exited ${unpacked.exitCode}: ${unpacked.stderr}`);
  return { success: true, dir: backup.dir, id: backup.id };
}
