// Cases the file tools' tests share: on a folder (local backend) and on a workspace port without one.

/** Paths that leave the workspace, by what they try. */
export const ESCAPING_PATHS = [
  ["a path climbing out with ../", { path: "../../secrets.txt" }],
  ["a path climbing out after a folder", { path: "memory/../../x" }],
  ["an absolute path outside", { path: "/etc/passwd" }],
] as const;

/** Every file tool with the arguments it needs besides `path`. */
export const EVERY_FILE_TOOL = [
  ["read", {}],
  ["write", { content: "x" }],
  ["append", { text: "x" }],
  ["edit", { oldText: "a", newText: "b" }],
  ["list", {}],
] as const;
