// One routing config per schema (src/cluster/routing-check.ts) on a real PostgreSQL: the first
// gateway's routing settings are stored in `cluster_settings`; a gateway whose settings differ from
// a live member's is refused naming each setting and the fix, and changes nothing; one that differs
// only from the stored settings (every gateway that had them gone) replaces them, with a warning.
// With real gateway processes: test/e2e/cluster-gateway.test.ts "refuses a second gateway whose
// session.dmScope differs...".
import { describe, expect, it } from "vitest";
import { checkRoutingConfig } from "../../src/cluster/routing-check.js";
import { parseConfig } from "../../src/config/index.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type RoutingSettings, routingSettings } from "../../src/routing/routing-settings.js";
import { useLiveMembers } from "../support/live-members.js";

const { database: opened, member } = useLiveMembers("rc");

/** The routing settings of a config with `session` over the defaults. */
const settingsOf = (session: object, rest: object = {}): RoutingSettings =>
  routingSettings(parseConfig({ session, ...rest }).config);

/** `nodeId` checks `settings` as a joining gateway does. */
function attempt(nodeId: string, settings: RoutingSettings, logger = createMemoryLogger()) {
  return checkRoutingConfig({ pool: opened().pool, schema: opened().schema, incarnation: nodeId, settings, logger });
}

/** {@link attempt}, which must pass; its warnings. */
async function check(nodeId: string, settings: RoutingSettings) {
  const logger = createMemoryLogger();
  await attempt(nodeId, settings, logger);
  return logger.records.filter((record) => record.level === "warn");
}

async function stored(name = "routing"): Promise<unknown> {
  const { rows } = await opened().pool.query<{ value: string }>("SELECT value FROM cluster_settings WHERE name = $1", [
    name,
  ]);
  return rows[0] && JSON.parse(rows[0].value);
}

async function clearRouting() {
  await opened().pool.query("DELETE FROM cluster_settings WHERE name LIKE 'routing%'");
}

describe("one routing config per schema", () => {
  it("stores the first gateway's settings; a second with the same config joins; one whose dmScope differs is refused naming it, changing nothing", async () => {
    await clearRouting();
    const [a, b] = [await member("rc-a"), await member("rc-b")];
    const main = settingsOf({ dmScope: "main" });
    expect(await check(a.nodeId, main)).toEqual([]);
    expect(await stored()).toEqual(main);
    expect(await check(b.nodeId, settingsOf({ dmScope: "main", mainKey: " Main " }))).toEqual([]);
    const c = await member("rc-c");
    const perPeer = settingsOf({ dmScope: "per-peer" });
    const refused = attempt(c.nodeId, perPeer);
    await expect(refused).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await expect(refused).rejects.toThrow(
      `this gateway's routing config differs from that of gateway rc-a, running on PostgreSQL schema "${opened().schema}": ` +
        'session.dmScope is "per-peer" here, "main" there. Every gateway on one schema needs the same routing config',
    );
    await expect(refused).rejects.toThrow(
      "to change them stop every gateway on the schema and start them with the new ones",
    );
    expect(await stored()).toEqual(main);
    expect(await stored("routing@rc-c")).toBeUndefined();
    await Promise.all([a.die(), b.die()]);
  });

  it("names every differing setting: identity links, the default agent, the agent ids and bindings", async () => {
    await clearRouting();
    const a = await member("rc-d");
    await check(a.nodeId, settingsOf({}));
    const other = settingsOf(
      { identityLinks: { ada: ["telegram:111"] } },
      { agents: { list: [{ id: "ops" }] }, bindings: [{ agentId: "ops", match: { channel: "discord" } }] },
    );
    const b = await member("rc-e");
    const refused = attempt(b.nodeId, other);
    await expect(refused).rejects.toThrow(
      'session.identityLinks is [["ada",["telegram:111"]]] here, [] there; agents.default is "ops" here, "main" there; ' +
        'agents.list is ["ops"] here, ["main"] there; ' +
        'bindings is [{"channel":"discord","account":"default","agentId":"ops"}] here, [] there.',
    );
    await a.die();
  });

  it("takes a changed config once no gateway that had the old one is running, and says what changed", async () => {
    await clearRouting();
    const a = await member("rc-f");
    await check(a.nodeId, settingsOf({ dmScope: "main" }));
    await a.die();
    const b = await member("rc-g");
    const perPeer = settingsOf({ dmScope: "per-peer" });
    const warnings = await check(b.nodeId, perPeer);
    expect(warnings.map((w) => [w.message, w.fields.changed])).toEqual([
      [
        "the schema's routing config changed (no running gateway had the old one): chats may map to other sessions from now on",
        ['session.dmScope is "per-peer" here, "main" before'],
      ],
    ]);
    expect(await stored()).toEqual(perPeer);
    await b.die();
  });

  it("replaces a stored value that is not JSON (written by hand), naming every setting, instead of failing on it", async () => {
    await clearRouting();
    await opened().pool.query("INSERT INTO cluster_settings (name, value) VALUES ('routing', 'dmScope=main')");
    const a = await member("rc-n");
    const warnings = await check(a.nodeId, settingsOf({}));
    expect(warnings[0]!.fields.changed).toHaveLength(7);
    expect(await stored()).toEqual(settingsOf({}));
    await a.die();
  });

  it("lets gateways started at once with the same new config all join, and refuses one of another config among them", async () => {
    await clearRouting();
    const old = await member("rc-old");
    await check(old.nodeId, settingsOf({ dmScope: "main" }));
    await old.die();
    const joining = await Promise.all(["rc-h", "rc-i", "rc-j"].map(member));
    const perPeer = settingsOf({ dmScope: "per-channel-peer" });
    await Promise.all(joining.map((m) => check(m.nodeId, perPeer)));
    expect(await stored()).toEqual(perPeer);
    const late = await member("rc-k");
    await expect(check(late.nodeId, settingsOf({ dmScope: "main" }))).rejects.toThrow("session.dmScope");
    await Promise.all(joining.map((m) => m.die()));
  });

  it("refuses a gateway whose cluster.owners differs from a live member's, naming both and the fix; a member of a version before migration 0014 (no mode) is not compared", async () => {
    await clearRouting();
    const settings = settingsOf({});
    const owners = (nodeId: string, mode: string) =>
      opened().pool.query("UPDATE cluster_members SET owners = $2 WHERE node_id = $1", [nodeId, mode]);
    const old = await member("rc-old");
    await check(old.nodeId, settings);
    const many = await member("rc-many");
    await owners(many.nodeId, "many");
    const join = (nodeId: string, mode: "one" | "many") =>
      checkRoutingConfig({
        pool: opened().pool,
        schema: opened().schema,
        incarnation: nodeId,
        settings,
        owners: mode,
        logger: createMemoryLogger(),
      });
    await join(many.nodeId, "many");
    const one = await member("rc-one");
    const refused = join(one.nodeId, "one");
    await expect(refused).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await expect(refused).rejects.toThrow(
      `this gateway's cluster.owners is "one", but gateway rc-many, running on PostgreSQL schema "${opened().schema}", runs "many". ` +
        "Every gateway on one schema needs the same cluster.owners",
    );
    await expect(refused).rejects.toThrow(
      'set cluster.owners to "many" here, or to change the mode stop every gateway',
    );
    await join((await member("rc-many-2")).nodeId, "many");
  });
});
