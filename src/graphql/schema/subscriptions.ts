import type { GraphQLResolveInfo } from "graphql";
import { asReader } from "../../auth/request-context.ts";
import { finalJobStatuses } from "../../core/job-lifecycle/lifecycle.ts";
import { type Expr, idIn, type PathExpr, type QueryOptions, type SelectItem } from "../../core/query.ts";
import { type Channel, channels, parseDeviceChange, parseId } from "../../db/channels.ts";
import { NotFound } from "../../errors.ts";
import type { EventBus } from "../../events/bus.ts";
import { ChangeStream, defaultLimits } from "../../events/change-stream.ts";
import type { GraphQLContext } from "../context.ts";
import type { Builder, InputRef, ObjectRef, ObjectRefs } from "./builder.ts";
import type { GraphQLModel, ObjectSpec, Row } from "./graphql-model.ts";
import { followCaller } from "./live-caller.ts";
import { readRows } from "./read.ts";
import type { WhereInput } from "./where.ts";

// Live state over GraphQL subscriptions (SSE at /graphql, yoga's own transport). The change bus
// (src/events) only says which rows changed; each subscriber reads them again through the same plan
// as the query roots, with its `where` and its permission predicate ANDed, and gets only the rows
// that come back. A row the caller may not read never reaches them, not even as an id.

// A command job's statuses after which nothing changes (issue 23).
const finalStatuses: ReadonlySet<string> = new Set(finalJobStatuses);
// The job's status, read under a key no GraphQL field has, whatever the client selected.
const STATUS_KEY = "$status";
const FAILURE_KEY = "$failure";

// Every read selects the row's id, under a key no GraphQL field has: the stream remembers what
// each subscriber last read of each row by it (src/events/visible-rows.ts).
const ID_KEY = "$id";
const rowId: SelectItem = { path: ["id"], as: ID_KEY };
const idOf = (row: Row) => Number(row[ID_KEY]);
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
  asReader(context);
  const { selection } = context.core;
  const options = selection.options(spec, info.fieldNodes, info, { where: where as WhereInput | null });
  selection.charge({ rows: 0 }, options, defaultLimits.batch);
  // Every stream's reads share a few connections of the pool (DATABASE_STREAM_CONNECTIONS), so a
  // burst of changes for many subscribers waits for them rather than for the requests' connections.
  const read = (rows: Expr, top: number, more: QueryOptions = {}) =>
    context.core.db.streams.use(() =>
      readRows(context, {
        resource: spec.resource.name,
        count: false,
        options: {
          ...options,
          select: [...(options.select ?? []), rowId, ...extra, ...(more.select ?? [])],
          filter: options.filter ? { kind: "logical", op: "and", operands: [options.filter, rows] } : rows,
          top,
          ...(more.orderby ? { orderby: more.orderby } : {}),
        },
      }),
    );
  return {
    /** The rows among `ids` the subscriber sees. */
    changed: (ids: readonly number[]) => read(idIn(ids), ids.length),
    /** A page of every row the subscriber sees, by id (ChangeSource.scan). */
    async scan(after: number) {
      const { batch } = defaultLimits;
      const rows = await read(
        { kind: "comparison", op: "gt", left: byId, right: { kind: "number", value: after } },
        batch,
        { orderby: [{ path: byId, direction: "asc" }] },
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

/**
 * `stream` once it listens on `watched` and has read its baseline (src/events/visible-rows.ts): a
 * change after the subscription starts is sent, a change the caller cannot read or did not select
 * never is.
 */
async function started(stream: ChangeStream<Row>, events: EventBus, watched: readonly Channel[]) {
  try {
    await Promise.all(watched.map((channel) => events.listening(channel)));
    await stream.baseline();
    return stream;
  } catch (error) {
    await stream.return();
    throw error;
  }
}

function deviceChanges(context: GraphQLContext, spec: ObjectSpec, info: GraphQLResolveInfo, where: unknown) {
  const rows = reader(context, spec, info, where);
  const { events } = context.core;
  const stream = new ChangeStream<Row>({
    listen: (changed, ended, missed) =>
      events.subscribe(
        channels.device,
        (payload) => {
          const change = parseDeviceChange(payload);
          if (change) changed(change.device);
        },
        ended,
        missed,
      ),
    read: rows.changed,
    idOf,
    scan: rows.scan,
    failed,
  });
  return started(stream, events, [channels.device]);
}

/** A fleet changes with its row, and with the state of any of its devices (its online count, …). */
function fleetChanges(context: GraphQLContext, spec: ObjectSpec, info: GraphQLResolveInfo, where: unknown) {
  const rows = reader(context, spec, info, where);
  const { events } = context.core;
  const stream = new ChangeStream<Row>({
    listen: (changed, ended, missed) => {
      const stopDevices = events.subscribe(
        channels.device,
        (payload) => {
          const change = parseDeviceChange(payload);
          if (change) changed(change.fleet);
        },
        ended,
        missed,
      );
      const stopFleets = events.subscribe(
        channels.fleet,
        (payload) => {
          const id = parseId(payload);
          if (id !== undefined) changed(id);
        },
        undefined,
        missed,
      );
      return () => {
        stopDevices();
        stopFleets();
      };
    },
    read: rows.changed,
    idOf,
    scan: rows.scan,
    failed,
  });
  return started(stream, events, [channels.device, channels.fleet]);
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
  // Listening starts before the first read, so no change falls between the two.
  const stream = new ChangeStream<Row>({
    listen: (changed, ended) =>
      events.subscribe(
        channels.commandJob,
        (payload) => {
          if (parseId(payload) === id) changed(id);
        },
        ended,
        // A final status announced while the bus reconnected was lost: the job is read again.
        () => changed(id),
      ),
    read: job.changed,
    idOf,
    isLast: (row) => finalStatuses.has(String(row[STATUS_KEY])),
    failed,
  });
  await events.listening(channels.commandJob);
  const [now] = await job.changed([id]).catch(async (error: unknown) => {
    await stream.return();
    throw error;
  });
  if (!now) {
    await stream.return();
    throw new NotFound(`No command job ${id}`);
  }
  // Sent, and remembered: a read that finds the job as sent (a change of an unselected field)
  // sends nothing.
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
      subscribe: (_root, args, context, info) =>
        followCaller(context, failed, (live) => deviceChanges(live, device, info, args.where)) as never,
      resolve: rowOrFailure,
    }),
    fleetChanged: t.field({
      type: refs.objects.get(fleet.name) as ObjectRef,
      description:
        "A fleet the caller may read that matches `where`, each time its row or the state of one of its devices changes",
      args: { where: t.arg({ type: refs.wheres.get(fleet.name) as InputRef }) },
      subscribe: (_root, args, context, info) =>
        followCaller(context, failed, (live) => fleetChanges(live, fleet, info, args.where)) as never,
      resolve: rowOrFailure,
    }),
    ...(job && {
      commandJob: t.field({
        type: refs.objects.get(job.name) as ObjectRef,
        description:
          "A command job the caller may read: now, then at each change of its counts or status; ends at a final status",
        args: { id: t.arg.int({ required: true }) },
        subscribe: (_root, args, context, info) =>
          followCaller(context, failed, (live) => commandJobProgress(live, job, info, args.id)) as never,
        resolve: rowOrFailure,
      }),
    }),
  }));
}
