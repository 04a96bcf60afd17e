import { describe, expect, it } from "vitest";
import { section, shellBlocks } from "../support/docs/readme-blocks.ts";
import { compare, differs, parseShown } from "../support/docs/readme-shown.ts";

// The reading of the README's examples that readme-examples.test.ts relies on: a mismatch is found,
// and `…` stands only for what it stands for.

const ok = (stdout: string, statuses: number[] = [200]) => ({ stdout, statuses, exitCode: 0 });

describe("shown output", () => {
  it("`…` is more members, any value, more elements or part of a string, and nothing else", () => {
    const shown = parseShown('{"id":28, …, "org":{"__id":3},"port":…,"list":[{"a":1}, …],"uuid":"6c4f…"}');
    expect(
      differs(shown, { id: 28, x: 1, org: { __id: 3 }, port: 5, list: [{ a: 1 }, { b: 2 }], uuid: "6c4fab" }),
    ).toBeUndefined();
    expect(differs(shown, { id: 29, org: { __id: 3 }, port: 5, list: [{ a: 1 }], uuid: "6c4f" })).toMatch(
      /\$\.id/,
    );
    expect(
      differs(shown, { id: 28, org: { __id: 3, y: 1 }, port: 5, list: [{ a: 1 }], uuid: "6c4f" }),
    ).toMatch(/members the README does not show: y/);
    expect(differs(shown, { id: 28, org: { __id: 3 }, port: 5, list: [], uuid: "6c4f" })).toMatch(
      /1 or more items/,
    );
    expect(differs(shown, { id: 28, org: { __id: 3 }, port: 5, list: [{ a: 1 }], uuid: "5ab5" })).toMatch(
      /uuid/,
    );
    expect(differs(parseShown('{"headers":{…}}'), { headers: { etag: "x" } })).toBeUndefined();
    expect(differs(parseShown('{"etag":"W/\\"…\\""}'), { etag: 'W/"abc"' })).toBeUndefined();
  });

  it("a status, a status and a body, alternatives, a note, and a request that failed unasked", () => {
    expect(compare({ shown: ["204"] }, ok("", [204]))).toBeUndefined();
    expect(compare({ shown: ["204"] }, ok("", [401]))).toMatch(/status 204, got 401/);
    expect(compare({ shown: ["204, or 412"] }, ok("", [412]))).toBeUndefined();
    expect(compare({ shown: ["204"] }, ok("", []))).toMatch(/status 204, got $/);
    expect(
      compare({ shown: ['200, or 400 (once it finished: "done (ok)")'] }, ok('"done"', [400])),
    ).toBeUndefined();
    expect(
      compare({ shown: ['207 [{"id":1}, …] (one per device)'] }, ok('[{"id":1},{"id":2}]', [207])),
    ).toBeUndefined();
    expect(compare({ shown: ['207 [{"id":1}, …] (one per device)'] }, ok("[]", [207]))).toMatch(/1 or more/);
    expect(compare({ shown: [] }, ok('{"error":"no"}', [403]))).toMatch(/a request failed: status 403/);
    expect(compare({ shown: [] }, { stdout: "", statuses: [], exitCode: 3 })).toMatch(/exit code 3/);
    expect(compare({ shown: ["OK"] }, ok("OK\n"))).toBeUndefined();
    expect(compare({ shown: ["OK"] }, ok("Unauthorized\n"))).toMatch(/README shows "OK"/);
    expect(compare({ shown: [], json: '{"d":1}' }, ok('{"d":2}'))).toMatch(/\$\.d/);
  });

  it("curl -i: the status line, the headers shown, then the body", () => {
    const shown = ["HTTP/1.1 202 Accepted", "location: /v6/command_job(1)", '{"id":1,…}'];
    const head = "HTTP/1.1 202 Accepted\r\nLocation: /v6/command_job(1)\r\nx: y\r\n\r\n";
    expect(compare({ shown }, ok(`${head}{"id":1,"s":2}`, [202]))).toBeUndefined();
    expect(compare({ shown }, ok(`${head.replace("(1)", "(2)")}{"id":1}`, [202]))).toMatch(/location/);
  });

  it("a stream: each shown event appears, in order, among those received", () => {
    const shown = [":", "", "event: next", 'data: {"s":"Stopping","u":"…"}', "… (one per change)"];
    const events = (...s: string[]) =>
      `:\n\n${s.map((x) => `event: next\ndata: {"s":"${x}","u":"a"}\n\n`).join("")}`;
    expect(
      compare({ shown }, { stdout: events("exited", "Stopping"), statuses: [], exitCode: null }),
    ).toBeUndefined();
    expect(compare({ shown }, { stdout: events("exited"), statuses: [], exitCode: null })).toMatch(
      /no event/,
    );
  });

  it("commands: quotes and backslashes continue a line; comments after a command are its output", () => {
    const lines = [
      "### Example",
      "```sh",
      "# A heading",
      'curl -d \'{"a":',
      "  1}' \\",
      "  http://x   # 204",
      "curl y",
      "# HTTP/1.1 200 OK",
      "",
      "# Another heading",
      "curl z",
      "```",
      "```json",
      '{"z":1}',
      "```",
    ].join("\n");
    const [block] = shellBlocks("### Example", section(lines, "### Example"));
    expect(block?.commands.map((c) => [c.text, c.shown, c.json])).toEqual([
      ["curl -d '{\"a\":\n  1}' \\\n  http://x", ["204"], undefined],
      ["curl y", ["HTTP/1.1 200 OK"], undefined],
      ["curl z", [], '{"z":1}'],
    ]);
  });
});
