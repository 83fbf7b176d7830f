import { describe, expect, it } from "vitest";
import { databaseUrlProblem, maskDatabaseUrl } from "../../src/config/schema/state.js";

describe("the PostgreSQL url", () => {
  it("is shown with its password masked, user and host kept", () => {
    expect(maskDatabaseUrl("postgres://sb:s3cret@db.example:5432/switchboard")).toBe(
      "postgres://sb:***@db.example:5432/switchboard",
    );
    expect(maskDatabaseUrl("postgres://sb@db.example/switchboard")).toBe("postgres://sb@db.example/switchboard");
    // Not a url, yet it may hold a password: still masked.
    expect(maskDatabaseUrl("sb:s3cret@db example")).not.toContain("s3cret");
  });

  it("has its form checked, with the fix in the message", () => {
    expect(databaseUrlProblem("postgres://sb:pw@127.0.0.1:5432/switchboard")).toBeUndefined();
    expect(databaseUrlProblem("postgresql://sb@db/switchboard")).toBeUndefined();
    expect(databaseUrlProblem("db.example:5432")).toMatch(/^(is not a url|starts with)/);
    expect(databaseUrlProblem("mysql://sb@db/switchboard")).toBe(
      'starts with "mysql:": use "postgres://user:password@host:5432/database"',
    );
    expect(databaseUrlProblem("postgres://sb@db.example:5432")).toMatch(/^names no database/);
  });
});
