import type { FastifyInstance } from "fastify";
import { apiKeyRoutes } from "./api-keys.ts";
import type { AccountDeps } from "./deps.ts";
import { loginRoutes } from "./login.ts";
import { userKeyRoutes } from "./user-keys.ts";
import { whoamiRoutes } from "./whoami.ts";

/** The accounts surface: logins and session tokens, who the caller is, and the API keys they make. */
export function accountRoutes(app: FastifyInstance, deps: AccountDeps): void {
  loginRoutes(app, deps);
  whoamiRoutes(app);
  userKeyRoutes(app, deps);
  apiKeyRoutes(app, deps);
}
