import type { ArithOp, CmpOp, Fn, Node } from "./filter-ast.ts";
import { textLiteral } from "./filter-ast.ts";
import { intLiteral } from "./filter-leaves.ts";
import type { Ty } from "./filter-schema.ts";
import type { World } from "./filter-world.ts";
import type { Row } from "./oracle-eval.ts";

// Issue 28's filters, written as the generated tests' trees (so the oracle answers them): counts
// nested in counts, lambdas and paths through to-one navigations, and functions that name their
// arguments more than once in SQL, nested in one another.

export const p = (ty: Ty, ...segments: string[]): Node => ({ k: "path", ty, segments });
export const cmp = (op: CmpOp, l: Node, r: Node): Node => ({ k: "cmp", op, l, r });
export const and = (...xs: Node[]): Node => ({ k: "logic", op: "and", xs });
export const or = (...xs: Node[]): Node => ({ k: "logic", op: "or", xs });
export const count = (nav: string, filter?: Node): Node => ({
  k: "count",
  nav: [nav],
  ...(filter ? { filter } : {}),
});
export const any = (nav: string, v: string, body: Node): Node => ({
  k: "lambda",
  q: "any",
  nav: [nav],
  v,
  body,
});
export const all = (nav: string, v: string, body: Node): Node => ({
  k: "lambda",
  q: "all",
  nav: [nav],
  v,
  body,
});
export const fn = (name: Fn, ty: Ty, ...args: Node[]): Node => ({ k: "call", fn: name, ty, args });
export const arith = (op: ArithOp, l: Node, r: Node): Node => ({ k: "arith", ty: "int", op, l, r });
export const int = intLiteral;
export const text = textLiteral;
export const time = (iso: string): Node => ({
  k: "lit",
  ty: "time",
  text: `datetime'${iso}'`,
  value: new Date(iso).getTime(),
});

/**
 * `length(substring(device_name, length(substring(device_name, …, device_tag/$count add
 * is_managed_by__device/cpu_temp)), device_tag/$count add is_managed_by__device/cpu_temp)) ne 5`,
 * `depth` deep: each level reads a count and a path, and its start holds the level below. SQL once
 * named a substring's bounds three times each (and every count and path in them), so the statement
 * grew threefold with each level.
 */
export function nestedSubstrings(depth: number): Node {
  let bound = count("manages__device");
  for (let level = 0; level < depth; level++) {
    const length = arith("add", count("device_tag"), p("int", "is_managed_by__device", "cpu_temp"));
    bound = fn("length", "int", fn("substring", "text", p("text", "device_name"), bound, length));
  }
  return cmp("ne", bound, int(5));
}

/** The deep filters, each with a name for the test's title. */
export const deepFilters: readonly (readonly [string, Node])[] = [
  [
    // The example, on the fixture's navigations.
    "issue 28's example",
    or(
      cmp("ne", p("time", "last_vpn_event"), time("2024-03-01T00:00:00.001Z")),
      and(
        cmp(
          "ne",
          count(
            "manages__device",
            cmp("ne", p("text", "is_managed_by__device", "belongs_to__application", "app_name"), text("")),
          ),
          int(3),
        ),
        cmp(
          "ge",
          count(
            "manages__device",
            cmp("ge", count("manages__device", p("bool", "is_managed_by__device", "is_online")), int(1)),
          ),
          int(0),
        ),
      ),
      cmp(
        "eq",
        count("device_tag", cmp("eq", p("int", "device", "provisioning_progress"), p("int", "id"))),
        int(2),
      ),
      any(
        "manages__device",
        "t",
        and(
          cmp("ne", p("text", "t", "is_managed_by__device", "note"), text("x")),
          cmp("ge", count("device_tag"), int(1)),
        ),
      ),
    ),
  ],
  [
    // The same with a first disjunct that holds for few rows, so the rest runs on the others.
    "issue 28's example, selective",
    or(
      cmp("eq", p("time", "last_vpn_event"), time("2025-01-01T00:00:00.000Z")),
      and(
        cmp(
          "ne",
          count(
            "manages__device",
            cmp("ne", p("text", "is_managed_by__device", "belongs_to__application", "app_name"), text("")),
          ),
          int(3),
        ),
        cmp(
          "ge",
          count(
            "manages__device",
            cmp("ge", count("manages__device", p("bool", "is_managed_by__device", "is_online")), int(1)),
          ),
          int(0),
        ),
      ),
      cmp(
        "eq",
        count("device_tag", cmp("eq", p("int", "device", "provisioning_progress"), p("int", "id"))),
        int(2),
      ),
      any(
        "manages__device",
        "t",
        and(
          cmp("ne", p("text", "t", "is_managed_by__device", "note"), text("x")),
          cmp("ge", count("device_tag"), int(1)),
        ),
      ),
    ),
  ],
  ["substrings nested four deep over counts and paths", nestedSubstrings(4)],
  [
    "endswith and substring of counts and paths, in a count",
    cmp(
      "ge",
      count(
        "manages__device",
        fn(
          "endswith",
          "bool",
          fn(
            "substring",
            "text",
            fn("concat", "text", p("text", "device_name"), p("text", "is_managed_by__device", "device_name")),
            count("device_tag"),
            count("manages__device"),
          ),
          fn(
            "substring",
            "text",
            p("text", "is_managed_by__device", "belongs_to__application", "app_name"),
            arith("add", fn("length", "int", p("text", "status")), count("manages__device")),
          ),
        ),
      ),
      int(0),
    ),
  ],
  [
    // Division by a column: these conjuncts run only on rows (and joined rows) the caller may see.
    "divisions through paths in counts",
    or(
      cmp(
        "ge",
        count(
          "manages__device",
          cmp(
            "gt",
            arith("div", p("int", "is_managed_by__device", "memory_usage"), p("int", "memory_total")),
            int(0),
          ),
        ),
        int(1),
      ),
      cmp(
        "eq",
        count(
          "device_tag",
          cmp(
            "eq",
            arith(
              "mod",
              p("int", "device", "is_managed_by__device", "memory_usage"),
              p("int", "device", "memory_total"),
            ),
            p("int", "device", "cpu_temp"),
          ),
        ),
        int(1),
      ),
    ),
  ],
  [
    // A computed field read through a path is null where the path leads nowhere.
    "computed fields through paths",
    or(
      cmp("eq", p("text", "is_managed_by__device", "overall_status"), text("idle")),
      and(
        cmp(
          "ne",
          p("text", "is_managed_by__device", "is_managed_by__device", "overall_status"),
          text("offline"),
        ),
        cmp(
          "ge",
          count(
            "device_tag",
            cmp("eq", p("text", "device", "is_managed_by__device", "overall_status"), { k: "null" }),
          ),
          int(1),
        ),
      ),
    ),
  ],
  [
    "lambdas over paths of their variables",
    and(
      all(
        "device_tag",
        "t",
        and(
          cmp("ne", p("text", "t", "device", "belongs_to__application", "app_name"), text("")),
          cmp("ne", p("text", "t", "device", "is_managed_by__device", "device_name"), text("x")),
        ),
      ),
      or(
        any(
          "manages__device",
          "u",
          or(
            cmp("eq", p("text", "u", "belongs_to__user", "username"), text("alice")),
            cmp("eq", p("text", "u", "is_of__device_type", "slug"), text("intel-nuc")),
          ),
        ),
        cmp("eq", count("manages__device"), int(0)),
      ),
    ),
  ],
  [
    // Organization B's devices managed by A's hold 987654: an admin's division by zero, not a
    // tenant's, who cannot see them (and a path read beside it joins their rows in the count).
    "a division on rows only the admin sees, in a count beside a path",
    cmp(
      "ge",
      count(
        "manages__device",
        or(
          cmp("eq", arith("div", int(1), arith("sub", p("int", "storage_usage"), int(987654))), int(0)),
          cmp("eq", p("text", "is_managed_by__device", "note"), text("x")),
        ),
      ),
      int(0),
    ),
  ],
];

/**
 * The rows organization A's user (alice, the tenant) may read: A's fleets and devices, their tags,
 * A itself, the users who are members of A (alice and bob), and the device types.
 */
export function visibleToTenant(world: World): World["tables"] {
  const { tables } = world;
  const fleets = new Set(tables.application.filter((row) => row.organization === 1).map((row) => row.id));
  const devices = tables.device.filter(
    (row) => fleets.has(row.belongs_to__application) || row.belongs_to__user === 1,
  );
  const ids = new Set(devices.map((row) => row.id));
  const members = new Set(
    world.memberships.filter((row) => row.is_member_of__organization === 1).map((row) => row.user),
  );
  const keep = (rows: readonly Row[], test: (row: Row) => boolean) => rows.filter(test);
  return {
    ...tables,
    device: devices,
    application: keep(tables.application, (row) => fleets.has(row.id)),
    user: keep(tables.user, (row) => members.has(row.id)),
    organization: keep(tables.organization, (row) => row.id === 1),
    device_tag: keep(tables.device_tag, (row) => ids.has(row.device)),
  };
}
