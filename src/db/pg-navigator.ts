// pg asks at import whether it runs in a Cloudflare Worker. Without a global `navigator` (Node 20
// has none; Node 21 and later have one) it tries `new Response(…)`, which loads Node's whole fetch
// implementation: about 45 ms of every start. Import this module right before "pg" and
// ./pg-navigator-end.ts right after: pg then sees a navigator like Node 21's, and nothing else does.
const g = globalThis as { navigator?: unknown };

export const lent = g.navigator === undefined;
if (lent) g.navigator = { userAgent: `Node.js/${process.versions.node.split(".")[0]}` };
