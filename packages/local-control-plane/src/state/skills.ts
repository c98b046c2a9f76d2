import { createError } from "@open-managed-agents/runtime-resource-contract";
import type { Clock } from "./clock.js";
import { newId } from "./ids.js";

/** One uploaded version of a skill: its metadata and archive (zip or tar). */
export interface SkillVersionRecord {
  readonly id: string;
  readonly skillId: string;
  readonly name: string;
  readonly description: string;
  readonly archive: Buffer;
  readonly createdAt: number;
}

/** Skills an agent may carry; the SDK's worker downloads them into `<workdir>/skills/<name>`. */
export function createSkills(clock: Clock) {
  const versions = new Map<string, SkillVersionRecord[]>();
  return {
    /** Adds a version; without `skillId`, a new skill. */
    upload(input: {
      skillId?: string;
      name: string;
      description: string;
      archive: Buffer;
    }): SkillVersionRecord {
      const skillId = input.skillId ?? newId("skill");
      if (input.skillId !== undefined && !versions.has(input.skillId))
        throw createError("not_found", {
          message: `skill ${input.skillId} not found`,
          context: { skillId: input.skillId },
        });
      const record: SkillVersionRecord = {
        id: String(clock() * 1000 + (versions.get(skillId)?.length ?? 0)),
        skillId,
        name: input.name,
        description: input.description,
        archive: input.archive,
        createdAt: clock(),
      };
      versions.set(skillId, [...(versions.get(skillId) ?? []), record]);
      return record;
    },
    /** A version by id, or the newest for `latest`. */
    get(skillId: string, version: string): SkillVersionRecord {
      const all = versions.get(skillId) ?? [];
      const found =
        version === "latest" ? all.at(-1) : all.find((candidate) => candidate.id === version);
      if (!found)
        throw createError("not_found", {
          message: `skill ${skillId} has no version ${version}`,
          context: { skillId, version },
        });
      return found;
    },
    list(skillId: string): readonly SkillVersionRecord[] {
      const all = versions.get(skillId);
      if (!all)
        throw createError("not_found", {
          message: `skill ${skillId} not found`,
          context: { skillId },
        });
      return all;
    },
  };
}

/** The skills store's type. */
export type Skills = ReturnType<typeof createSkills>;
