import type { GraphQLContext } from "../context.ts";

type Stream<T> = AsyncIterableIterator<T>;

/**
 * Opens a subscription's stream for as long as its credential holds (issue 27; DESIGN.md, "Later is
 * now"). Its reads are the caller's as the credential resolves now (an admin flag taken away, a
 * device moved to another fleet); once the credential no longer resolves (a key deleted or expired,
 * a password changed, a user deleted), the stream's last item is `failed` with an UNAUTHENTICATED
 * error naming why, and it completes. Without a credential there is nothing to revoke: an anonymous
 * stream reads public rows only.
 */
export async function followCaller<T>(
  context: GraphQLContext,
  failed: (error: Error) => T,
  open: (context: GraphQLContext) => Stream<T> | Promise<Stream<T>>,
): Promise<Stream<T>> {
  const { caller, credential } = context;
  if (!caller || caller.kind === "anonymous" || credential === undefined) return open(context);
  // The stream's own context: its caller is replaced as the credential resolves anew.
  const live: { -readonly [K in keyof GraphQLContext]: GraphQLContext[K] } = { ...context };
  let revoke = (_error: Error) => {};
  const revoked = new Promise<Error>((resolve) => {
    revoke = resolve;
  });
  const unfollow = context.core.credentials.follow(credential, caller, {
    changed: (now) => {
      live.caller = now;
    },
    revoked: (error) => {
      // Fail closed: a read after this is refused, not made as the caller that was.
      live.caller = undefined;
      revoke(error);
    },
  });
  try {
    return untilRevoked(await open(live), revoked, failed, unfollow);
  } catch (error) {
    unfollow();
    throw error;
  }
}

/** `stream` until `revoked` settles, whose error `failed` makes the last item. */
function untilRevoked<T>(
  stream: Stream<T>,
  revoked: Promise<Error>,
  failed: (error: Error) => T,
  unfollow: () => void,
): Stream<T> {
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    unfollow();
    // Stops the stream at once, even while it waits for a change or reads.
    void stream.return?.();
  };
  const revocation = revoked.then((error) => ({ revokedBy: error }));
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (ended) return { done: true, value: undefined };
      const pending = stream.next();
      // Left behind when revoked first: its end must not surface as an unhandled rejection.
      pending.catch(() => {});
      const next = await Promise.race([pending, revocation]);
      if ("revokedBy" in next) {
        end();
        return { done: false, value: failed(next.revokedBy) };
      }
      if (next.done) end();
      return next;
    },
    async return() {
      end();
      return { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      end();
      throw error;
    },
  };
}
