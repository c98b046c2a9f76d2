import * as z from "zod";

/** `BetaSkillVersion`. */
export const skillVersionSchema = z
  .object({
    type: z.literal("skill_version"),
    id: z.string(),
    skill_id: z.string(),
    name: z.string(),
    description: z.string(),
    created_at: z.string(),
  })
  .strict();

/** A page of skill versions (`PageCursor`). */
export const skillVersionListSchema = z
  .object({ data: z.array(skillVersionSchema), next_page: z.string().nullable() })
  .strict();
