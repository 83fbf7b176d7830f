import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolvePaths, resolveStorePath } from "../../src/config/index.js";

const base = { homeDir: "/home/ann", cwd: "/work" };

describe("resolvePaths", () => {
  it("defaults to ~/.switchboard/switchboard.json5", () => {
    expect(resolvePaths({ ...base, env: {} })).toEqual({
      home: "/home/ann/.switchboard",
      configFile: "/home/ann/.switchboard/switchboard.json5",
      explicit: false,
    });
  });

  it("takes the state directory from SWITCHBOARD_HOME, with ~ and relative paths resolved", () => {
    expect(resolvePaths({ ...base, env: { SWITCHBOARD_HOME: "~/bots" } }).configFile).toBe(
      "/home/ann/bots/switchboard.json5",
    );
    expect(resolvePaths({ ...base, env: { SWITCHBOARD_HOME: "state" } }).home).toBe("/work/state");
  });

  it("lets --config beat SWITCHBOARD_CONFIG, which beats the home default", () => {
    const env = { SWITCHBOARD_HOME: "/srv/sb", SWITCHBOARD_CONFIG: "/etc/sb.json5" };
    expect(resolvePaths({ ...base, env }).configFile).toBe("/etc/sb.json5");
    expect(resolvePaths({ ...base, env, configFlag: "local.json5" })).toEqual({
      home: "/srv/sb",
      configFile: "/work/local.json5",
      explicit: true,
    });
  });
});

describe("resolveStorePath", () => {
  const paths = { home: "/srv/sb", configFile: "/srv/sb/switchboard.json5" };

  it("keeps one store per agent under the state directory", () => {
    expect(resolveStorePath(paths.home, "ops", undefined, "/home/ann")).toBe(
      path.join("/srv/sb/agents/ops/sessions/sessions.json"),
    );
  });

  it("substitutes {agentId} and ~ in session.store", () => {
    expect(resolveStorePath(paths.home, "ops", "~/stores/{agentId}.json", "/home/ann")).toBe(
      "/home/ann/stores/ops.json",
    );
  });
});
