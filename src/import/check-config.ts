import { ConfigSchema, formatPath } from "../config/index.js";
import { renameLegacyNames } from "../config/legacy-names.js";
import { type ImportReport, isRecord } from "./import-report.js";

function removeAt(root: Record<string, unknown>, path: readonly PropertyKey[]): boolean {
  let node: unknown = root;
  for (const segment of path.slice(0, -1)) node = (node as Record<PropertyKey, unknown> | undefined)?.[segment];
  const last = path.at(-1);
  if (last === undefined || typeof node !== "object" || node === null) return false;
  if (Array.isArray(node) && typeof last === "number") node.splice(last, 1);
  else delete (node as Record<PropertyKey, unknown>)[last];
  return true;
}

/**
 * The mapped config, checked by Switchboard's own schema: each value it refuses is taken out and
 * reported with the schema's reason, so the written file always loads. Legacy `provider` /
 * `surface` names are renamed (and noted) as the loader would.
 */
export function checkedConfig(mapped: Record<string, unknown>, report: ImportReport): Record<string, unknown> {
  const renamed = renameLegacyNames(mapped);
  for (const warning of renamed.warnings)
    report.notes.push({ where: warning.split(":")[0]!, reason: 'legacy name, written as "channel"' });
  const config = (isRecord(renamed.value) ? renamed.value : {}) as Record<string, unknown>;
  for (let round = 0; round < 50; round++) {
    const parsed = ConfigSchema.safeParse(config);
    if (parsed.success) return config;
    let removed = 0;
    for (const issue of parsed.error.issues) {
      const paths = issue.code === "unrecognized_keys" ? issue.keys.map((key) => [...issue.path, key]) : [issue.path];
      for (const path of paths) {
        if (!removeAt(config, path)) continue;
        removed++;
        report.unmapped.push({ where: formatPath(path), reason: `refused by Switchboard's config: ${issue.message}` });
      }
    }
    if (removed === 0) break;
  }
  report.unmapped.push({ where: "(config)", reason: "could not be made valid; no config written, defaults apply" });
  return {};
}
