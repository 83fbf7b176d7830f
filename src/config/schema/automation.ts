import { z } from "zod";

/** `cron.*`: the scheduler inside the gateway (jobs live in `$SWITCHBOARD_HOME/cron/jobs.json`). */
export const CronConfigSchema = z.strictObject({
  /** default: true; false keeps the jobs on disk but never runs them */
  enabled: z.boolean().default(true),
  /** default: 2000000 (2 MB); a job's run log over this size keeps its newest half */
  runLogMaxBytes: z.number().int().min(10_000).default(2_000_000),
});
export type CronConfig = z.infer<typeof CronConfigSchema>;

/** `hooks.*`: inbound webhooks on the gateway port (`POST <path>/agent`, `POST <path>/wake`). */
export const HooksConfigSchema = z
  .strictObject({
    /** default: false */
    enabled: z.boolean().default(false),
    /** secret, at least 16 characters; required when enabled; must differ from gateway.auth.token */
    token: z.string().min(16, "must be at least 16 characters").optional(),
    /** default: "/hooks" */
    path: z
      .string()
      .regex(/^\/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]$/, 'must start with "/" and not end with "/", e.g. "/hooks"')
      .default("/hooks"),
    /** default: [] (every agent); agent ids a hook may run */
    allowedAgentIds: z.array(z.string().trim().toLowerCase().min(1)).default([]),
    /** default: false; a request may name its own `sessionKey` instead of a new `hook:<uuid>` */
    allowRequestSessionKey: z.boolean().default(false),
    /** default: 262144 (256 KiB); larger bodies get 413 */
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(16 * 1024 * 1024)
      .default(262_144),
  })
  .superRefine((hooks, ctx) => {
    if (hooks.enabled && !hooks.token)
      ctx.addIssue({ code: "custom", path: ["token"], message: "required when hooks.enabled is true" });
    // Hooks are served before the gateway's own routes: a path over one of them would take it over.
    const taken = RESERVED_PATHS.find(
      (reserved) =>
        hooks.path === reserved || hooks.path.startsWith(`${reserved}/`) || reserved.startsWith(`${hooks.path}/`),
    );
    if (taken)
      ctx.addIssue({
        code: "custom",
        path: ["path"],
        message: `"${hooks.path}" overlaps the gateway's own ${taken}; use e.g. "/hooks"`,
      });
  });
export type HooksConfig = z.infer<typeof HooksConfigSchema>;

/** Paths the gateway serves itself (the Telegram webhook's default too). */
const RESERVED_PATHS = ["/tools", "/healthz", "/telegram-webhook"];
