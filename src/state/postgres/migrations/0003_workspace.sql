-- Agent workspaces (src/workspace/workspace-port.ts) on the "postgres" backend: one row per file,
-- by agent and path relative to the workspace ("MEMORY.md", "memory/2026-01-31.md"). Folders are
-- not stored: a folder is there while a file under it is.
CREATE TABLE workspace_files (
  agent text NOT NULL,
  path text NOT NULL,
  content text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agent, path)
);
