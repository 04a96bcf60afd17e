/**
 * How one API version differs from the version it translates to (`to`), as data: v1–v5 each
 * against the version above it, v7 against v6, the core's own version. Resource-level maps are
 * keyed by the `to` version's resource name; field maps go from this version's name to the `to`
 * version's, and every path is in the `to` version's names.
 */
export interface VersionStep {
  readonly version: string;
  readonly to: string;
  /** Resources named otherwise in this version: this version's name → the `to` version's. */
  readonly renamedResources?: Readonly<Record<string, string>>;
  /** Resources of the `to` version that this one does not have (404 here). */
  readonly missingResources?: readonly string[];
  /** Fields and navigations named otherwise: this version's name → the `to` version's. */
  readonly renamed?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Fields and navigations of the `to` version that this one does not have (400 here). */
  readonly missing?: Readonly<Record<string, readonly string[]>>;
  /** Fields only this version has, read through a to-one path of the `to` version (v5 `device_type`). */
  readonly derived?: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  /**
   * Read-only links only this version has: the first of the paths whose value is not null, read as
   * `{"__id": N}`. With a `target` resource they expand and navigate like any link (v7's device
   * `should_be_running__release`); without one they are only read (v7's `actor`). A link replaces a
   * field of the same name.
   */
  readonly links?: Readonly<Record<string, Readonly<Record<string, Link>>>>;
  /**
   * Fields only this version reads, each from a field v6 keeps hidden (a column v6 does not serve, or
   * a computed field of this version's rule): this version's name → the hidden field. Read-only; one
   * replaces a field of the same name.
   */
  readonly hidden?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Text fields whose values this version names otherwise: this version's value → the `to` version's. */
  readonly values?: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, string>>>>>>;
  /** What a successful PATCH, PUT or DELETE answers, when not the `to` version's answer. */
  readonly writeReply?: WriteReplyBody;
}

export interface Link {
  readonly firstOf: readonly (readonly string[])[];
  readonly target?: string;
}

/** v6 (and older) answer the JSON string "OK"; pinejs itself, and so v7, an empty body. */
export type WriteReplyBody = "OK" | "empty";
