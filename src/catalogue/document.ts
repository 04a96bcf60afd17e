import { z } from "zod";
import type { CatalogueConfig } from "../config.ts";
import { type CatalogueEntry, catalogueEntrySchema } from "./schema.ts";

// The configuration document served at GET /config: deployment settings and the catalogue.
export const configDocumentSchema = z.strictObject({
  supportedSocialProviders: z.array(z.string()),
  pubnub: z.strictObject({ subscribe_key: z.string(), publish_key: z.string() }),
  mixpanelToken: z.string(),
  intercomAppId: z.string(),
  recurlyPublicKey: z.string(),
  deviceUrlsBase: z.string(),
  gitServerUrl: z.string(),
  adminUrl: z.string(),
  debugEnabled: z.boolean(),
  ga: z.strictObject({ id: z.string(), site: z.string() }),
  deviceTypes: z.array(catalogueEntrySchema),
});

export type ConfigDocument = z.infer<typeof configDocumentSchema>;

/** The document as served: every member but the catalogue comes from configuration. */
export function configDocument(config: CatalogueConfig, deviceTypes: CatalogueEntry[]): ConfigDocument {
  return {
    supportedSocialProviders: config.SUPPORTED_SOCIAL_PROVIDERS,
    pubnub: { subscribe_key: config.PUBNUB_SUBSCRIBE_KEY, publish_key: config.PUBNUB_PUBLISH_KEY },
    mixpanelToken: config.MIXPANEL_TOKEN,
    intercomAppId: config.INTERCOM_APP_ID,
    recurlyPublicKey: config.RECURLY_PUBLIC_KEY,
    deviceUrlsBase: config.DEVICE_URLS_BASE,
    gitServerUrl: config.GIT_SERVER_URL,
    adminUrl: config.ADMIN_URL,
    debugEnabled: config.DEBUG_ENABLED,
    ga: { id: config.GA_ID, site: config.GA_SITE },
    deviceTypes,
  };
}
