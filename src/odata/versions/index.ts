import type { ODataQuery } from "../../core/query.ts";
import type { Model } from "../../model/types.ts";
import { STANDARD_ROOT } from "../negotiation.ts";
import type { VersionStep } from "./step.ts";
import { VersionTranslator } from "./translate.ts";
import { v1 } from "./v1.ts";
import { v2 } from "./v2.ts";
import { v3 } from "./v3.ts";
import { v4 } from "./v4.ts";
import { v5 } from "./v5.ts";
import { v7 } from "./v7.ts";
import { currentView, stepView, type VersionView } from "./view.ts";

/** The core's version: every other one is translated to it. */
export const currentVersion = "v6";
// Each step describes its version against the one it translates to, which comes before it here:
// v7 is newer than the core, v5…v1 older.
const steps: readonly VersionStep[] = [v7, v5, v4, v3, v2, v1];
/** The newest model, which the standard OData v4 root (negotiation.ts `STANDARD_ROOT`) serves. */
export const newestVersion = "v7";

export interface Versions {
  readonly names: readonly string[];
  view(version: string): VersionView;
  /** The v6 query meaning the same as `query` in `version` (the identity for v6). */
  toV6(version: string, query: ODataQuery): ODataQuery;
  translator(version: string): VersionTranslator | undefined;
}

export function buildVersions(model: Model): Versions {
  const views = new Map<string, VersionView>([[currentVersion, currentView(currentVersion, model)]]);
  for (const step of steps) {
    const to = views.get(step.to);
    if (!to) throw new Error(`versions: ${step.version} translates to unknown ${step.to}`);
    views.set(step.version, stepView(to, step));
  }
  // The standard root reads and writes the newest model under its own name (its URLs, contexts
  // and locations say `/odata/`).
  views.set(STANDARD_ROOT, views.get(newestVersion) as VersionView);
  const translators = new Map(
    [...views]
      .filter(([name]) => name !== currentVersion)
      .map(([name, view]) => [name, new VersionTranslator(view)]),
  );
  return {
    names: [...views.keys()],
    view(version) {
      const view = views.get(version);
      if (!view) throw new Error(`unknown version ${version}`);
      return view;
    },
    toV6: (version, query) => translators.get(version)?.query(query) ?? query,
    translator: (version) => translators.get(version),
  };
}
