import { monitorEventLoopDelay, performance } from "node:perf_hooks";

// Issue 45, item 1: requests built to hold the server's event loop, and how long they held it. Each
// round's text is new (fresh alias names, values, depths), so no cache of documents, plans or
// statements answers for it, as none would for an attacker. `bench/hostile.ts` gives the figures;
// `test/graphql/hostile-documents.test.ts` and `test/odata/hostile-urls.test.ts` send the same
// requests and check what the server answers.

export interface HostileRequest {
  readonly path: string;
  /** A GraphQL POST's JSON body; a GET without it. */
  readonly body?: string;
  readonly accept?: string;
}

/** A request of round `round`, new text each round. */
export type Attack = (round: number) => HostileRequest;

const graphql = (query: string): HostileRequest => ({ path: "/graphql", body: JSON.stringify({ query }) });

/** `count` aliased root fields `selection`, named afresh for each round. */
export const aliases = (count: number, selection: string, round: number): string =>
  `{ ${Array.from({ length: count }, (_, i) => `r${round}a${i}: ${selection}`).join(" ")} }`;

/**
 * A fragment bomb: each of `levels` fragments spreads the one below `width` times, each time one
 * relation deeper, so the operation's fields grow as `width` to the power of `levels` while the
 * document stays a few thousand characters.
 */
export function fragmentBomb(levels: number, width: number, round: number): string {
  const fragments = [`fragment B0 on Device { id r${round}: uuid }`];
  for (let level = 1; level <= levels; level++) {
    const copies = Array.from(
      { length: width },
      (_, i) => `c${i}: belongsToApplication { ownsDevice(first: 1) { ...B${level - 1} } }`,
    );
    fragments.push(`fragment B${level} on Device { ${copies.join(" ")} }`);
  }
  return `{ devices(first: 1) { ...B${levels} } } ${fragments.join(" ")}`;
}

/** The fields `fragmentBomb` selects: each level's own (two a copy) over the level below's. */
export function fragmentBombFields(levels: number, width: number): number {
  let fields = 2;
  for (let level = 1; level <= levels; level++) fields = width * (2 + fields);
  // The operation's `devices`, and each fragment's own fields as written.
  return 1 + fields + 2 + levels * width * 2;
}

/** `count` fragments of one field each, all spread in one selection set. */
export function manyFragments(count: number, round: number): string {
  const spreads = Array.from({ length: count }, (_, i) => `...F${i}`).join(" ");
  const fragments = Array.from(
    { length: count },
    (_, i) => `fragment F${i} on Device { r${round}f${i}: id }`,
  );
  return `{ devices { ${spreads} } } ${fragments.join(" ")}`;
}

/** An OData GET; spaces percent-encoded as clients send them. */
const odata = (path: string): HostileRequest => ({ path: path.replaceAll(" ", "%20") });

/** `parts` joined with `separator` while they fit in about `length` characters. */
function upTo(length: number, separator: string, part: (i: number) => string): string {
  const parts: string[] = [];
  for (let i = 0, used = 0; used < length; i++) {
    const next = part(i);
    parts.push(next);
    used += next.length + separator.length;
  }
  return parts.join(separator);
}

/** `owns__device/any(d:d/belongs_to__application/…` nested `depth` deep, as a URL. */
export const nestedAny = (depth: number, round: number): string =>
  `/v6/application?$filter=${"owns__device/any(d:d/belongs_to__application/".repeat(depth)}id eq ${round}${")".repeat(depth)}`;

/** The same in GraphQL: `{ownsDevice: {some: {belongsToApplication: {…}}}}` nested `depth` deep. */
export const nestedSome = (depth: number, round: number): string =>
  `${"{ ownsDevice: { some: { belongsToApplication: ".repeat(depth)}{ id: { eq: ${round} } }${" } } }".repeat(depth)}`;

/** The attacks, by what they try; the bench and the tests send each a few rounds. */
export const attacks = {
  /** The issue's request: 2,000 aliases of a two-level list, 85 KB, over the field and cost limits. */
  graphqlAliases2000: (round) => graphql(aliases(2000, "devices { deviceTag { id } }", round)),
  /** Under the field limit (1,996 fields) but over the cost limit: planned, then refused. */
  graphqlOverCost: (round) =>
    graphql(aliases(499, "applications { ownsDevice { deviceTag { id } } }", round)),
  /** Just under both limits: 666 aliases (1,998 fields), what an allowed document of that size costs. */
  graphqlAllowed666: (round) => graphql(aliases(666, "devices { deviceTag { id } }", round)),
  /** 60² copies of a fragment (14,763 fields, within the depth limit) from a document of 7 KB. */
  graphqlFragmentBomb: (round) => graphql(fragmentBomb(2, 60, round)),
  /** 900 fragments spread side by side: validation would compare them in pairs. */
  graphqlManyFragments: (round) => graphql(manyFragments(900, round)),
  /** One field 1,000 times in one selection set: validation would compare them in pairs. */
  graphqlSameField: (round) => graphql(`{ devices(first: ${round + 1}) { ${"id ".repeat(1_000)}} }`),
  /** An `or` of comparisons as long as a URL may be (Node takes 16 KB of headers; spaces are `%20`). */
  odataLongFilter: (round) =>
    odata(`/v6/device?$filter=${upTo(9_000, " or ", (i) => `id eq ${round * 10_000 + i}`)}`),
  /** An `in` list of some 2,500 numbers. */
  odataInList: (round) =>
    odata(`/v6/device?$filter=id in (${upTo(13_000, ",", (i) => String(round * 10_000 + i))})`),
  /** Parentheses nested a thousand deep and more, deeper each round. */
  odataDeepParentheses: (round) => {
    const depth = 1_000 + round;
    return odata(`/v6/device?$filter=${"(".repeat(depth)}id eq ${round}${")".repeat(depth)}`);
  },
  /** Parentheses nested deeper than the parser's stack (a 400). */
  odataDeeperThanTheStack: (round) => {
    const depth = 6_000 + round;
    return odata(`/v6/device?$filter=${"(".repeat(depth)}id eq 1${")".repeat(depth)}`);
  },
  /** `any` inside `any`, as deep as a filter may nest them (MAX_LAMBDA_DEPTH, 4). */
  odataNestedAny: (round) => odata(nestedAny(4, round)),
  /** `any` inside `any`, 8 deep: beyond the limit, refused before planning reaches the database. */
  odataNestedAny8: (round) => odata(nestedAny(8, round)),
  /** `any` inside `any`, 30 deep (2 KB): past PostgreSQL's statement time-out when it was planned. */
  odataNestedAny30: (round) => odata(nestedAny(30, round)),
  /** GraphQL's `some` inside `some`, 30 deep: the same filter tree as `odataNestedAny30`. */
  graphqlNestedSome30: (round) => graphql(`{ applications(where: ${nestedSome(30, round)}) { id } }`),
  /** An `$expand` as wide as a URL may be, and as deep as ODATA_MAX_EXPAND_DEPTH lets it. */
  odataWideExpand: (round) =>
    odata(
      `/v6/device?$top=${round + 1}&$expand=${upTo(12_000, ",", () => "belongs_to__application($select=id;$expand=organization($select=id))")}`,
    ),
  /** One field selected some 4,000 times: more columns than PostgreSQL takes, unless collapsed. */
  odataRepeatedSelect: (round) =>
    odata(`/v6/device?$top=${round + 1}&$select=${upTo(12_000, ",", () => "id")}`),
  /**
   * A `$batch` of as many parts as it takes by default (ODATA_BATCH_MAX_PARTS, 100), each a read
   * with a `$filter` of some 200 `or`ed comparisons: what one request can ask of the parser and the
   * planner through the batch.
   */
  odataBatchParts: (round) => ({
    path: "/odata/$batch",
    body: JSON.stringify({
      requests: Array.from({ length: 100 }, (_, part) => ({
        id: String(part),
        method: "GET",
        url: `device?$top=${round + 1}&$select=id&$filter=${upTo(4_000, " or ", (i) => `id eq ${-(part * 1_000 + i + 1)}`)}`,
      })),
    }),
  }),
} satisfies Record<string, Attack>;

export type AttackName = keyof typeof attacks;

export interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly body: string;
  /** The SQL statements it ran (x-sql-statements). */
  readonly statements: number;
}

// Rounds are numbered across every measurement of the process, so no two requests share a text.
let nextRound = 0;

export interface AttackFigures {
  /** The longest the event loop was held, by monitorEventLoopDelay, in ms. */
  readonly maxBlockMs: number;
  /** `/ping`'s latency while the attack ran: its 99th percentile and its longest, in ms. */
  readonly pingP99Ms: number;
  readonly pingMaxMs: number;
  readonly pings: number;
  /** Each attacking request's status and time, in ms. */
  readonly answers: readonly Answer[];
}

/**
 * Sends `rounds` requests of `attack` to `url` one after another, with `/ping` asked all the while,
 * and measures the event loop of this process: the server must run in it (in-process).
 */
export async function measureAttack(
  url: string,
  attack: Attack,
  options: { rounds: number; authorization?: string },
): Promise<AttackFigures> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const pings: number[] = [];
  let attacking = true;
  const pinger = (async () => {
    while (attacking) {
      const start = performance.now();
      await (await fetch(`${url}/ping`)).arrayBuffer();
      pings.push(performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  histogram.enable();
  const answers: Answer[] = [];
  try {
    for (let round = 0; round < options.rounds; round++)
      answers.push(await send(url, attack(nextRound++), options));
  } finally {
    // A block that ends with the last answer is recorded when the timer after it fires.
    await new Promise((resolve) => setTimeout(resolve, 20));
    attacking = false;
    await pinger;
    histogram.disable();
  }
  const sorted = pings.sort((a, b) => a - b);
  return {
    maxBlockMs: histogram.max / 1e6,
    pingP99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
    pingMaxMs: sorted.at(-1) ?? 0,
    pings: sorted.length,
    answers,
  };
}

async function send(
  url: string,
  request: HostileRequest,
  options: { authorization?: string },
): Promise<Answer> {
  const start = performance.now();
  const response = await fetch(`${url}${request.path}`, {
    method: request.body === undefined ? "GET" : "POST",
    headers: {
      ...(request.body === undefined ? {} : { "content-type": "application/json" }),
      ...(request.accept ? { accept: request.accept } : {}),
      ...(options.authorization ? { authorization: options.authorization } : {}),
    },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const body = await response.text();
  const statements = Number(response.headers.get("x-sql-statements") ?? Number.NaN);
  return { status: response.status, ms: performance.now() - start, body, statements };
}
