import { describe, expect, it } from "vitest";
import type { Expr } from "../../src/core/query.ts";
import { BadRequest } from "../../src/errors.ts";
import { parse } from "../../src/odata/parse/parse.ts";

const filterOf = (query: string): Expr | undefined => parse(`/device?$filter=${query}`).options.filter;

// A compact rendering of a filter tree, so precedence reads at a glance.
function show(expr: Expr | undefined): string {
  if (!expr) return "-";
  switch (expr.kind) {
    case "path":
      return (
        expr.segments.join("/") +
        (expr.end?.kind === "count" ? "/$count" : expr.end ? `/${expr.end.quantifier}` : "")
      );
    case "number":
    case "boolean":
      return String(expr.value);
    case "text":
      return `'${expr.value}'`;
    case "datetime":
      return expr.value.toISOString();
    case "null":
      return "null";
    case "comparison":
    case "arithmetic":
      return `(${show(expr.left)} ${expr.op} ${show(expr.right)})`;
    case "logical":
      return `(${expr.operands.map(show).join(` ${expr.op} `)})`;
    case "not":
      return `not ${show(expr.operand)}`;
    case "in":
      return `(${show(expr.operand)} in [${expr.values.map(show).join(",")}])`;
    case "call":
      return `${expr.name}(${expr.args.map(show).join(",")})`;
  }
}

describe("OData precedence (4.01 URL conventions), not the shipped parser's left-to-right", () => {
  it.each([
    ["a eq 1 or b eq 2 and c eq 3", "((a eq 1) or ((b eq 2) and (c eq 3)))"],
    ["a eq 1 and b eq 2 or c eq 3", "(((a eq 1) and (b eq 2)) or (c eq 3))"],
    ["(a eq 1 or b eq 2) and c eq 3", "(((a eq 1) or (b eq 2)) and (c eq 3))"],
    ["a eq 1 or b eq 2 or c eq 3", "((a eq 1) or (b eq 2) or (c eq 3))"],
    ["a sub b add c eq 1", "(((a sub b) add c) eq 1)"],
    ["a div b mul c eq 1", "(((a div b) mul c) eq 1)"],
    ["a add b mul c eq 1", "((a add (b mul c)) eq 1)"],
    ["a sub b sub c eq 1", "(((a sub b) sub c) eq 1)"],
    ["a gt 1 eq true", "((a gt 1) eq true)"],
    ["not a eq 1", "(not a eq 1)"],
    ["not(a eq 1 and b eq 2)", "not ((a eq 1) and (b eq 2))"],
  ])("%s → %s", (input, expected) => {
    expect(show(filterOf(input))).toBe(expected);
  });
});

describe("the clients' dialect", () => {
  it.each([
    // pinejs-client 6 (balena-sdk 19) parenthesises every operand and spaces its lists.
    ["(is_online eq true) and (id eq 5)", "((is_online eq true) and (id eq 5))"],
    ["((a eq 1) and (b eq 2)) or (c eq 3)", "(((a eq 1) and (b eq 2)) or (c eq 3))"],
    ["id in (1, 2, 3)", "(id in [1,2,3])"],
    ["id in (1,2,3)", "(id in [1,2,3])"],
    ["uuid in ('a','b')", "(uuid in ['a','b'])"],
    ["created_at gt datetime'2024-01-02T03:04:05.000Z'", "(created_at gt 2024-01-02T03:04:05.000Z)"],
    ["not(a eq 1)", "not (a eq 1)"],
    ["not (id eq 1)", "not (id eq 1)"],
    ["substringof('x',device_name)", "substringof('x',device_name)"],
    ["contains(device_name,'foo')", "contains(device_name,'foo')"],
    ["tolower(device_name) eq 'foo'", "(tolower(device_name) eq 'foo')"],
    ["belongs_to__application/slug eq 'x'", "(belongs_to__application/slug eq 'x')"],
    ["owns__device/any(d:d/is_online eq true)", "owns__device/any"],
    ["owns__device/$count eq 0", "(owns__device/$count eq 0)"],
    ["owns__device/$count($filter=is_online eq true) gt 0", "(owns__device/$count gt 0)"],
    ["name eq 'O''Brien%20%26%20co%2F100%25'", "(name eq 'O'Brien & co/100%')"],
    ["name eq %27a%27", "(name eq 'a')"],
  ])("%s", (input, expected) => {
    expect(show(filterOf(input))).toBe(expected);
  });

  it("reads a query that a form encoder (URLSearchParams) encoded whole", () => {
    const encoded = new URLSearchParams({
      $filter: "belongs_to__application/any(a:a/slug eq 'gh_me/my app') and name eq 'O''Brien & co/100%'",
      $select: "id,uuid",
    })
      .toString()
      .replaceAll("+", "%20");
    const query = parse(`/device?${encoded}`);
    expect(show(query.options.filter)).toBe(
      "(belongs_to__application/any and (name eq 'O'Brien & co/100%'))",
    );
    expect(query.options.select).toEqual(["id", "uuid"]);
  });

  it("resolves @alias parameters", () => {
    expect(show(filterOf("id eq @x&@x=5"))).toBe("(id eq 5)");
    expect(parse("/device(@id)?@id=7").key).toEqual({ kind: "id", value: { kind: "number", value: 7 } });
  });

  it("keeps the lambda variable and the $count filter", () => {
    const lambda = filterOf("owns__device/any(d:d/is_online eq true)");
    expect(lambda).toMatchObject({ end: { kind: "lambda", quantifier: "any", variable: "d" } });
    const count = filterOf("owns__device/$count($filter=is_online eq true) gt 0");
    expect(count).toMatchObject({ left: { end: { kind: "count", filter: { kind: "comparison" } } } });
  });
});

describe("$orderby", () => {
  it("is ascending without a direction", () => {
    expect(parse("/device?$orderby=device_name,id desc,uuid asc").options.orderby).toEqual([
      { path: { kind: "path", segments: ["device_name"] }, direction: "asc" },
      { path: { kind: "path", segments: ["id"] }, direction: "desc" },
      { path: { kind: "path", segments: ["uuid"] }, direction: "asc" },
    ]);
  });

  it("takes paths and counts", () => {
    const [path, count] =
      parse("/device?$orderby=belongs_to__application/app_name,owns__x/$count desc").options.orderby ?? [];
    expect(path?.path.segments).toEqual(["belongs_to__application", "app_name"]);
    expect(count).toMatchObject({
      path: { segments: ["owns__x"], end: { kind: "count" } },
      direction: "desc",
    });
  });
});

describe("keys", () => {
  it.each([
    ["/device(5)", { kind: "id", value: { kind: "number", value: 5 } }],
    ["/device(uuid='abc')", { kind: "fields", values: [["uuid", { kind: "text", value: "abc" }]] }],
    ["/device(uuid=%27abc%27)", { kind: "fields", values: [["uuid", { kind: "text", value: "abc" }]] }],
    [
      "/device_tag(device=1,tag_key='k')",
      {
        kind: "fields",
        values: [
          ["device", { kind: "number", value: 1 }],
          ["tag_key", { kind: "text", value: "k" }],
        ],
      },
    ],
    [
      "/application(slug='gh_me%2Fmy%20app')",
      { kind: "fields", values: [["slug", { kind: "text", value: "gh_me/my app" }]] },
    ],
  ])("%s", (url, key) => {
    expect(parse(url).key).toEqual(key);
  });

  it("reads /$count and $count=true", () => {
    expect(parse("/device/$count?$filter=is_online eq true").count).toBe(true);
    expect(parse("/device?$count=true").options.count).toBe(true);
  });
});

describe("$expand", () => {
  it("keeps nested options separated by ; or &", () => {
    const semicolons = parse(
      "/application?$expand=owns__device($select=id,uuid;$filter=is_online eq true;$orderby=id desc;$top=5;$skip=1;$expand=is_of__device_type($select=slug))",
    );
    const ampersands = parse(
      "/application?$expand=owns__device($select=id,uuid&$filter=is_online eq true&$orderby=id desc&$top=5&$skip=1&$expand=is_of__device_type($select=slug))",
    );
    expect(ampersands).toEqual(semicolons);
    expect(semicolons.options.expand?.[0]).toMatchObject({
      name: "owns__device",
      count: false,
      options: {
        select: ["id", "uuid"],
        top: 5,
        skip: 1,
        expand: [{ name: "is_of__device_type", options: { select: ["slug"] } }],
      },
    });
  });

  it("reads nav/$count with and without a filter", () => {
    const [plain, filtered] =
      parse("/application?$expand=owns__device/$count,owns__release/$count($filter=status eq 'success')")
        .options.expand ?? [];
    expect(plain).toMatchObject({ name: "owns__device", count: true, options: {} });
    expect(filtered).toMatchObject({
      name: "owns__release",
      count: true,
      options: { filter: { kind: "comparison" } },
    });
  });
});

describe("what the parser rejects is a 400 that says why", () => {
  it.each([
    ["/device?$foo=1", /Malformed OData URL/],
    ["/device?$top=-1", /Malformed OData URL/],
    ["/device?$top=abc", /Malformed OData URL/],
    ["/device?$filter=a eq eq 1", /Malformed OData URL/],
    ["/device?$filter=(a eq 1", /Malformed OData URL/],
    ["/device?$filter=name eq '100%'", /percent-encoding/],
    ["/device?$filter=id eq @nope", /alias @nope is not defined/],
    ["/device(@nope)", /alias @nope is not defined/],
    ["/device?$filter=a eq b eq c", /Chained 'eq'/],
    ["/device?$filter=id in (other_id, 1)", /literal values only/],
    ["/device?$filter=id in (null, 1)", /literal values only/],
    ["/device?$filter=created_at gt duration'P1D'", /duration/],
    ["/device?$filter=owns__x(5)/a eq 1", /Keys inside paths/],
    ["/device?$filter=owns__x/foo(1) eq 1", /Unknown function 'foo'/],
    ["/device?$filter=time(created_at) eq 1", /Function 'time' is not supported/],
    ["/device?$filter=cast(id,'Edm.String') eq '1'", /Function 'cast' is not supported/],
    ["/device?$inlinecount=allpages", /\$inlinecount is not supported/],
    ["/device?$format=xml", /Malformed OData URL|not supported/],
    ["/device?$select=belongs_to__application/app_name", /\$select takes field and navigation names/],
    ["/device?$expand=a/b", /not supported; nest it/],
    ["/device?$expand=a(foo=1)", /Unknown option 'foo' in \$expand/],
    ["/device(1)/$links/application", /\$links/],
    ["/application(1)/owns__device", /navigation in the resource path/],
    ["/$1", /Malformed OData URL|content references/],
  ])("%s", (url, message) => {
    let error: unknown;
    try {
      parse(url);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(BadRequest);
    expect((error as Error).message).toMatch(message);
  });

  it("ignores plain parameters such as apikey at the root", () => {
    expect(parse("/device?apikey=abc&$top=1").options).toEqual({ top: 1 });
  });
});
