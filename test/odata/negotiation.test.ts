import { describe, expect, it } from "vitest";
import { BadRequest } from "../../src/errors.ts";
import {
  formatInUrl,
  type Negotiation,
  type NegotiationHeaders,
  negotiate,
  negotiationKey,
} from "../../src/odata/negotiation.ts";
import { parse } from "../../src/odata/parse/parse.ts";

// What a request negotiates, decided once (src/odata/negotiation.ts) for the statement cache's key,
// the compile step and the renderings alike.

const on = (url: string, headers: NegotiationHeaders = {}, version = "v6"): Negotiation =>
  negotiate({ version, url, headers });
const v4 = (metadataLevel: string, pageSize?: number, version = "v6") => ({
  protocol: "v4",
  version,
  metadataLevel,
  pageSize,
});

describe("negotiate", () => {
  it("keeps pinejs's format for a request that asks nothing, whatever it prefers", () => {
    expect(on("/device?$select=id")).toEqual({ protocol: "pinejs", version: "v6" });
    expect(on("/device", { prefer: "odata.maxpagesize=5", accept: "application/json" })).toEqual({
      protocol: "pinejs",
      version: "v6",
    });
  });

  it("answers OData v4 under the standard root whatever the headers", () => {
    expect(on("/device", {}, "odata")).toEqual(v4("minimal", undefined, "odata"));
  });

  it("answers OData v4 to each way of asking for it", () => {
    expect(on("/device", { "odata-maxversion": "4.0" })).toEqual(v4("minimal"));
    expect(on("/device", { "odata-version": "4.01" })).toEqual(v4("minimal"));
    expect(on("/device", { accept: "application/json;odata.metadata=none" })).toEqual(v4("none"));
    expect(on("/device?$format=json;odata.metadata=full")).toEqual(v4("full"));
    expect(on("/device?$format=application%2Fjson%3Bodata.metadata%3Dminimal")).toEqual(v4("minimal"));
  });

  it("takes the level from $format before Accept, and the page size from Prefer", () => {
    const headers = { accept: "application/json;odata.metadata=none", prefer: "odata.maxpagesize=20" };
    expect(on("/device?$format=json;odata.metadata=full", headers)).toEqual(v4("full", 20));
    expect(on("/device", { "odata-maxversion": "4.0", prefer: "odata.maxpagesize=0" })).toEqual(
      v4("minimal"),
    );
  });

  it("refuses a level in Accept it does not know, naming it", () => {
    expect(() =>
      on("/device", { "odata-maxversion": "4.0", accept: "application/json;odata.metadata=most" }),
    ).toThrow(new BadRequest("odata.metadata=most is not supported; use minimal, full or none"));
  });

  it("leaves a $format level the grammar refuses to the parser, which names its position", () => {
    const url = "/device?$format=json;odata.metadata=bogus";
    expect(() => on(url)).not.toThrow();
    expect(() => parse(url)).toThrow(/Malformed OData URL at character 37/);
  });

  it("gives different negotiations different statement-cache keys", () => {
    const negotiations = [
      on("/device"),
      on("/device", {}, "v5"),
      on("/device", { "odata-maxversion": "4.0" }),
      on("/device", { accept: "application/json;odata.metadata=full" }),
      on("/device", { accept: "application/json;odata.metadata=full", prefer: "odata.maxpagesize=2" }),
      on("/device", {}, "odata"),
    ];
    expect(new Set(negotiations.map(negotiationKey)).size).toBe(negotiations.length);
  });
});

describe("$format read from a raw URL", () => {
  // A statement-cache hit is not parsed: the raw reading must find what the parser finds.
  it.each([
    "/device",
    "/device?$format=json",
    "/device?$format=json;odata.metadata=full",
    "/device?$format=application/json;odata.metadata=minimal",
    "/device?$format=json%3Bodata.metadata%3Dfull",
    "/device?$select=id&$format=application%2Fjson%3Bodata.metadata%3Dnone",
    "/device?%24format=json;odata.metadata=full",
    "/device?$format=%6Aso%6E;odata%2Emetadata=%66ull",
    "/device?$format=json;metadata=full",
    "/device?$format=json;odata.metadata=full&$format=json",
    "/device?$format=json&$format=json;odata.metadata=none",
    "/device?$filter=device_name eq 'a?b'&$format=json;odata.metadata=full",
    "/device?$expand=belongs_to__application($select=id)&$format=json;odata.metadata=full",
  ])("as the parser does: %s", (url) => {
    expect(formatInUrl(url)?.metadata).toBe(parse(url).options.format?.metadata);
  });
});
