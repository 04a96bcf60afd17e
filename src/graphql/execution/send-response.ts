import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";

/** Sends a Fetch API response (yoga's, graphql-sse's) through fastify's reply. */
export async function sendResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  response.headers.forEach((value, key) => {
    reply.header(key, value);
  });
  // A subscription over SSE lasts as long as its client stays; closing the connection destroys
  // the stream, which cancels yoga's and ends the subscription. Its connection closes when it ends,
  // so a server that ends its subscriptions to shut down does not then wait on idle connections.
  if (response.body && response.headers.get("content-type")?.startsWith("text/event-stream"))
    return reply
      .header("connection", "close")
      .code(response.status)
      .send(Readable.from(response.body as unknown as AsyncIterable<Uint8Array>, { objectMode: false }));
  return reply.code(response.status).send(await response.text());
}
