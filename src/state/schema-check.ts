/** What a schema's `safeParse` answers (zod's, seen structurally: the state layer depends on no schema library). */
type SafeParsed<T> = { success: true; data: T } | { success: false; error: { message: string } };

/** A table's `check` (TableSpec): a row is valid exactly when `schema` accepts it, as parsed; otherwise why not. */
export function checkWith<T>(schema: { safeParse(row: unknown): SafeParsed<T> }) {
  return (_key: string, row: unknown): { value: T } | { error: string } => {
    const parsed = schema.safeParse(row);
    return parsed.success ? { value: parsed.data } : { error: parsed.error.message };
  };
}
