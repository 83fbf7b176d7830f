// `state.*`: where the gateway keeps its durable state (docs/storage.md).
import { z } from "zod";
import { SCHEMA_NAME, databaseUrlProblem } from "../database-url.js";

/** `state.postgres.*`: the database of a gateway whose `state.backend` is "postgres". */
const PostgresConfigSchema = z.strictObject({
  /** secret (holds the password); else SWITCHBOARD_DATABASE_URL; "postgres://user:password@host:5432/database" */
  url: z
    .string()
    .trim()
    .min(1)
    .superRefine((url, ctx) => {
      const problem = databaseUrlProblem(url);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  /** default: "switchboard"; the deployment's schema, so several deployments can share a database */
  schema: z
    .string()
    .regex(SCHEMA_NAME, 'must be a lower-case identifier (letters, digits, "_"), e.g. "switchboard"')
    .default("switchboard"),
  /** default: 10; connections at most */
  poolSize: z.number().int().min(1).max(200).default(10),
});

/** `state.*`: "local" keeps everything in files under $SWITCHBOARD_HOME; "postgres" in a PostgreSQL schema. */
export const StateConfigSchema = z.strictObject({
  /** default: "local" (needs nothing); "postgres" needs state.postgres.url or SWITCHBOARD_DATABASE_URL */
  backend: z.enum(["local", "postgres"]).default("local"),
  postgres: PostgresConfigSchema.prefault({}),
});
/** The resolved `state` section. */
export type StateConfig = z.infer<typeof StateConfigSchema>;
