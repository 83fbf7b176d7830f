// The secret a standby's relayed requests carry to the owner (`x-switchboard-relay`): one random
// value per schema, in `cluster_settings` (migration 0005), created by the first member that needs it.
import { randomBytes } from "node:crypto";
import type { Db } from "./lease-sql.js";

/** The header a relayed request carries the secret in. */
export const RELAY_SECRET_HEADER = "x-switchboard-relay";

/** The schema's relay secret; the first caller creates it (32 random bytes, hex), every later one reads the same. */
export async function readRelaySecret(db: Db): Promise<string> {
  await db.query("INSERT INTO cluster_settings (name, value) VALUES ('relay_secret', $1) ON CONFLICT DO NOTHING", [
    randomBytes(32).toString("hex"),
  ]);
  const { rows } = await db.query<{ value: string }>("SELECT value FROM cluster_settings WHERE name = 'relay_secret'");
  return rows[0]!.value;
}
