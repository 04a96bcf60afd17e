import compress from "@fastify/compress";
import type { FastifyInstance } from "fastify";

export interface CompressionOptions {
  readonly enabled: boolean;
  /** The smallest answer compressed, in bytes. */
  readonly minBytes: number;
}

/**
 * Answers of at least `minBytes` in `br` or `gzip`, as the client's Accept-Encoding prefers, with
 * @fastify/compress (fastify's own: the negotiation with q-values, `Vary`, small answers compressed
 * in one call, large ones as a stream, brotli at quality 4 rather than zlib's 11). Its compressible
 * types are JSON and text except `text/event-stream`: a subscription's events must reach the client
 * as each is written, not wait in a compressor's buffer. Request bodies are not decompressed: no
 * client of this API sends them compressed, and each route's body limit stays a limit on bytes sent.
 */
export async function useCompression(app: FastifyInstance, options: CompressionOptions): Promise<void> {
  if (!options.enabled) return;
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    encodings: ["br", "gzip"],
    threshold: options.minBytes,
  });
}
