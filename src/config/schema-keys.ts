import type { z } from "zod";

type Node = z.core.$ZodType;

function unwrap(node: Node): Node {
  let current = node;
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: Node; in?: Node };
    if (def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else return current;
  }
}

/** The keys an object in `schema` accepts at `path` (array indexes and record keys are stepped through). */
export function schemaKeysAt(schema: Node, path: readonly PropertyKey[]): string[] {
  let node: Node | undefined = unwrap(schema);
  for (const segment of path) {
    if (!node) return [];
    const def = node._zod.def as { type: string; shape?: Record<string, Node>; element?: Node; valueType?: Node };
    if (def.type === "object") node = def.shape?.[String(segment)];
    else if (def.type === "array") node = def.element;
    else if (def.type === "record") node = def.valueType;
    else return [];
    node = node && unwrap(node);
  }
  const def = node?._zod.def as { type: string; shape?: Record<string, Node> } | undefined;
  return def?.type === "object" && def.shape ? Object.keys(def.shape) : [];
}
