import type { GraphQLResolveInfo } from "graphql";
import { type Expr, idIn, type PathExpr, type QueryOptions, type SelectItem } from "../core/query.ts";
import { NotFound } from "../errors.ts";
import { ChangeStream, defaultLimits } from "../events/change-stream.ts";
import { channels, parseDeviceChange, parseId } from "../events/channels.ts";
import type { Builder } from "./builder.ts";
import { access, type GraphQLContext } from "./context.ts";
import type { InputRef, ObjectRef, ObjectRefs } from "./objects.ts";
import { readRows } from "./read.ts";
import type { GraphQLModel, ObjectSpec, Row } from "./types.ts";
import type { WhereInput } from "./where.ts";

// Live state over GraphQL subscriptions (SSE at /graphql, yoga's own transport). The change bus
// (src/events) only says which rows changed; each subscriber reads them again through the same plan
// as the query roots, with its `where` and its permission predicate ANDed, and gets only the rows
// that come back. A row the caller may not read never reaches them, not even as an id.

// A command job's statuses after which nothing changes (issue 23).
const finalStatuses = new Set(["succeeded", "partially_failed", "failed", "cancelled"]);
// The job's status, read under a key no GraphQL field has, whatever the client selected.
const STATUS_KEY = "$status";
const FAILURE_KEY = "$failure";
const JOB_POLL_MS = 10_000;

const ID_KEY = "$id";
const byId: PathExpr = { kind: "path", segments: ["id"] };

/**
 * How one subscription reads: the field's selection, its `where` and the caller's permissions,
 * ANDed with the rows asked for, one plan and one statement per read (the query roots' path).
 * Refuses what a query would refuse before the stream starts: a bad credential, a bad `where`, a
 * selection over the cost limit for one read's worth of rows.
 */
function reader(
  context: GraphQLContext,
  spec: ObjectSpec,
  info: GraphQLResolveInfo,
  where: unknown,
  extra: readonly SelectItem[] = [],
) {
  access(context);
  const { selection } = context.core;
  const options = selection.options(spec, info.fieldNodes, info, { where: where as WhereInput | null });
  selection.charge({ rows: 0 }, options, defaultLimits.batch);
  const read = (rows: Expr, top: number, more: QueryOptions = {}) =>
    readRows(context, {
      resource: spec.resource.name,
      count: false,
      options: {
        ...options,
        select: [...(options.select ?? []), ...extra, ...(more.select ?? [])],
        filter: options.filter ? { kind: "logical", op: "and", operands: [options.filter, rows] } : rows,
        top,
        ...(more.orderby ? { orderby: more.orderby } : {}),
      },
    });
  return {
    /** The rows among `ids` the subscriber sees. */
    changed: (ids: readonly number[]) => read(idIn(ids), ids.length),
    /** A page of every row the subscriber sees, by id (ChangeSource.scan). */
    async scan(after: number) {
      const { batch } = defaultLimits;
      const rows = await read(
        { kind: "comparison", op: "gt", left: byId, right: { kind: "number", value: after } },
        batch,
        {
          select: [{ path: ["id"], as: ID_KEY }],
          orderby: [{ path: byId, direction: "asc" }],
        },
      );
      const last = rows.at(-1);
      return { rows, next: rows.length < batch || !last ? undefined : Number(last[ID_KEY]) };
    },
  };
}

// A stream that fails sends the error as its last result (GraphQL's shape, its code), then completes.
const failed = (error: Error): Row => ({ [FAILURE_KEY]: error });
const rowOrFailure = (row: Row) => {
  const failure = row[FAILURE_KEY];
  if (failure) throw failure;
  return row as never;
};

function deviceChanges(context: GraphQLContext, spec: ObjectSpec, info: GraphQLResolveInfo, where: unknown) {
  const rows = reader(context, spec, info, where);
  const { events } = context.core;
  return new ChangeStream<Row>({
    listen: (changed, ended) =>
      events.subscribe(
        channels.device,
        (payload) => {
          const change = parseDeviceChange(payload);
          if (change) changed(change.device);
        },
        ended,
      ),
    read: rows.changed,
    scan: rows.scan,
    failed,
  });
}

/** A fleet changes with its row, and with the state of any of its devices (its online count, …). */
function fleetChanges(context: GraphQLContext, spec: ObjectSpec, info: GraphQLResolveInfo, where: unknown) {
  const rows = reader(context, spec, info, where);
  const { events } = context.core;
  return new ChangeStream<Row>({
    listen: (changed, ended) => {
      const stopDevices = events.subscribe(
        channels.device,
        (payload) => {
          const change = parseDeviceChange(payload);
          if (change) changed(change.fleet);
        },
        ended,
      );
      const stopFleets = events.subscribe(channels.fleet, (payload) => {
        const id = parseId(payload);
        if (id !== undefined) changed(id);
      });
      return () => {
        stopDevices();
        stopFleets();
      };
    },
    read: rows.changed,
    scan: rows.scan,
    failed,
  });
}

/** The job now, then after each change, until it reaches a final status. */
async function commandJobProgress(
  context: GraphQLContext,
  spec: ObjectSpec,
  info: GraphQLResolveInfo,
  id: number,
) {
  const { events } = context.core;
  const job = reader(context, spec, info, undefined, [{ path: ["status"], as: STATUS_KEY }]);
  // The job as last sent: a read that finds it unchanged (a poll, a change of an unselected field)
  // sends nothing.
  let sent: string | undefined;
  const read = async (ids: readonly number[]) => {
    const rows = await job.changed(ids);
    const now = JSON.stringify(rows);
    if (now === sent) return [];
    sent = now;
    return rows;
  };
  // Listening starts before the first read, so no change falls between the two.
  const stream = new ChangeStream<Row>({
    listen: (changed, ended) => {
      const stop = events.subscribe(
        channels.commandJob,
        (payload) => {
          if (parseId(payload) === id) changed(id);
        },
        ended,
      );
      // A final status announced while the LISTEN connection was being replaced would be lost, and
      // the stream would never end: the job is also read again now and then.
      const poll = setInterval(() => changed(id), JOB_POLL_MS);
      return () => {
        clearInterval(poll);
        stop();
      };
    },
    read,
    isLast: (row) => finalStatuses.has(String(row[STATUS_KEY])),
    failed,
  });
  await events.listening(channels.commandJob);
  const [now] = await read([id]).catch(async (error: unknown) => {
    await stream.return();
    throw error;
  });
  if (!now) {
    await stream.return();
    throw new NotFound(`No command job ${id}`);
  }
  stream.first(now);
  return stream;
}

/** `deviceChanged(where)`, `fleetChanged(where)` and, once the registry has command jobs, `commandJob(id)`. */
export function subscriptionFields(builder: Builder, graph: GraphQLModel, refs: ObjectRefs): void {
  builder.subscriptionType({});
  const device = graph.objectOf("device");
  const fleet = graph.objectOf("application");
  const job = graph.objects.get("command_job");
  builder.subscriptionFields((t) => ({
    deviceChanged: t.field({
      type: refs.objects.get(device.name) as ObjectRef,
      description:
        "A device the caller may read that matches `where`, each time its online state, status, running release or download progress changes",
      args: { where: t.arg({ type: refs.wheres.get(device.name) as InputRef }) },
      subscribe: (_root, args, context, info) => deviceChanges(context, device, info, args.where) as never,
      resolve: rowOrFailure,
    }),
    fleetChanged: t.field({
      type: refs.objects.get(fleet.name) as ObjectRef,
      description:
        "A fleet the caller may read that matches `where`, each time its row or the state of one of its devices changes",
      args: { where: t.arg({ type: refs.wheres.get(fleet.name) as InputRef }) },
      subscribe: (_root, args, context, info) => fleetChanges(context, fleet, info, args.where) as never,
      resolve: rowOrFailure,
    }),
    ...(job && {
      commandJob: t.field({
        type: refs.objects.get(job.name) as ObjectRef,
        description:
          "A command job the caller may read: now, then at each change of its counts or status; ends at a final status",
        args: { id: t.arg.int({ required: true }) },
        subscribe: (_root, args, context, info) => commandJobProgress(context, job, info, args.id) as never,
        resolve: rowOrFailure,
      }),
    }),
  }));
}
