import { z } from "zod";

// The environment variables behind GET /config, merged into src/config.ts's schema. Public client
// identifiers of third-party services are placeholders until configured: the document is public.
const placeholder = (name: string) => z.string().default(`<${name}>`);

export const catalogueConfigSchema = z.object({
  SUPPORTED_SOCIAL_PROVIDERS: z
    .string()
    .default("")
    .transform((list) =>
      list
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== ""),
    ),
  DEVICE_URLS_BASE: z.string().default("devices.localhost"),
  GIT_SERVER_URL: z.string().default("git.localhost"),
  ADMIN_URL: z.string().default("http://127.0.0.1:3000"),
  DEBUG_ENABLED: z.stringbool().default(false),
  GA_ID: placeholder("GA_ID"),
  GA_SITE: z.string().default("localhost"),
  MIXPANEL_TOKEN: placeholder("MIXPANEL_TOKEN"),
  INTERCOM_APP_ID: placeholder("INTERCOM_APP_ID"),
  RECURLY_PUBLIC_KEY: placeholder("PUBLIC_KEY"),
  PUBNUB_SUBSCRIBE_KEY: placeholder("SUBSCRIBE_KEY"),
  PUBNUB_PUBLISH_KEY: placeholder("PUBLISH_KEY"),
});

export type CatalogueConfig = z.infer<typeof catalogueConfigSchema>;
